/**
 * The regions benchmark's processes, started together and torn down together whatever failed:
 * a loopback supercluster (test/harness/supercluster.ts: one nats-server with JetStream per
 * region, the regions joined by gateways, every gateway link through the harness's gateway
 * proxy so a partition can cut it), a load process in each region holding a second connection
 * to the other region, and registry replicas in regional mode, started on demand.
 */
import { join } from "node:path";
import { startSupercluster, type SuperclusterHandle } from "../../test/harness/supercluster.js";
import { startLoad, startRegistry, type LoadProc, type RegistryProc } from "./processes.js";
import type { Context } from "./scenario.js";

export type RegionSite = {
  readonly name: string;
  /** The region's client URL. */
  readonly url: string;
  /** A load process connected to this region, with a second connection to the other one. */
  readonly load: LoadProc;
};

export type RegionsStack = {
  readonly sc: SuperclusterHandle;
  readonly sites: readonly [RegionSite, RegionSite];
  /** A replica of `site`'s region in regional mode (and waits for /readyz); stopped with the stack. */
  registry(site: RegionSite, env: Record<string, string>, readyTimeoutMs?: number): Promise<RegistryProc>;
};

export async function withRegions<T>(ctx: Context, names: readonly [string, string], body: (stack: RegionsStack) => Promise<T>): Promise<T> {
  const sc = await startSupercluster({ regions: [...names], serversPerRegion: 1 });
  const loads: LoadProc[] = [];
  const registries: RegistryProc[] = [];
  try {
    const site = async (name: string, other: string): Promise<RegionSite> => {
      const load = startLoad();
      loads.push(load);
      await load.call("connect", { url: sc.regions[name]!.url });
      await load.call("regionsPeer", { url: sc.regions[other]!.url });
      return { name, url: sc.regions[name]!.url, load };
    };
    const sites = [await site(names[0], names[1]), await site(names[1], names[0])] as const;
    const stack: RegionsStack = {
      sc,
      sites,
      async registry(s, env, readyTimeoutMs) {
        const r = await startRegistry({
          natsUrl: s.url,
          name: `bench-${s.name}`,
          nodeArgs: ctx.nodeFlags,
          cpuProfDir: ctx.cpuProfDir ? join(ctx.cpuProfDir, `regions-${s.name}`) : undefined,
          env: { REGISTRY_REGION: s.name, REGISTRY_REGIONS: names.join(","), ...env },
        });
        registries.push(r);
        await r.waitReady(readyTimeoutMs);
        return r;
      },
    };
    return await body(stack);
  } finally {
    for (const load of loads) {
      await load.call("close").catch(() => undefined);
      await load.stop();
    }
    for (const r of registries.reverse()) await r.stop();
    await sc.stop();
  }
}
