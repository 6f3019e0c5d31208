/**
 * Three regions on one machine (a one-server cluster each, joined by gateways): a coordinator in
 * any region finds every region's agents with their region named; when one region is cut off
 * the two others keep seeing each other fresh and it stale, it sees both stale and still
 * answers for its own agents; after the heal every region sees every other fresh again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const REGIONS = ["eu", "us", "ap"] as const;
const CAPABILITY = "geo.answer";

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: three regions", () => {
  let sc: SuperclusterHandle;
  const registries = new Map<string, TestRegistry>();
  const clients = new Map<string, RawClient>();
  /** `lookup` from `region`, as `agent_type@region` with stale marks. */
  const providers = async (region: string) =>
    ((await clients.get(region)!.request("lookup", { capability: CAPABILITY })).body.providers as Array<{ agent_type: string; region: string; stale?: boolean }>).map(
      (p) => `${p.agent_type}@${p.region}${p.stale === true ? " (stale)" : ""}`,
    );

  beforeAll(async () => {
    sc = await startSupercluster({ regions: [...REGIONS] });
    const base = testConfig(sc.regions.eu!.url, { region: "eu", regions: [...REGIONS], remoteStaleMs: 2_000 });
    await Promise.all(
      REGIONS.map(async (region) => {
        const url = sc.regions[region]!.url;
        registries.set(region, await startRegistry(url, {}, { ...base, natsUrl: url, region, replicaName: `${region}-1` }));
        clients.set(region, await RawClient.connect(url, base.prefix));
      }),
    );
    for (const region of REGIONS) {
      const type = `geo-${region}`;
      const r = await clients.get(region)!.request(`register.${type}`, {
        spec: spec(type, { capabilities: [{ name: CAPABILITY, description: `answers from ${region}`, input_schema: { type: "object" }, output_schema: {} }] }),
        instance_id: "i1",
      });
      expect(r.ok).toBe(true);
    }
  });
  afterAll(async () => {
    await Promise.all([...clients.values()].map((c) => c.close().catch(() => undefined)));
    await Promise.all([...registries.values()].map((r) => r.stop("test over")));
    await sc?.stop();
  });

  it("every region finds every region's agent, its own first", async () => {
    for (const region of REGIONS) {
      await waitFor(async () => (await providers(region)).length === 3, { timeoutMs: 20_000, message: `${region} sees all three regions` });
      const seen = await providers(region);
      expect(seen[0]).toBe(`geo-${region}@${region}`);
      expect([...seen].sort()).toEqual(REGIONS.map((r) => `geo-${r}@${r}`).sort());
    }
  });

  it("a cut-off region is stale to the others, they are stale to it, and all are fresh after the heal", async () => {
    sc.isolate("ap");
    try {
      await waitFor(async () => (await providers("eu")).includes("geo-ap@ap (stale)") && (await providers("us")).includes("geo-ap@ap (stale)"), {
        timeoutMs: 20_000,
        message: "eu and us mark ap stale",
      });
      await waitFor(async () => (await providers("ap")).filter((p) => p.endsWith("(stale)")).length === 2, { timeoutMs: 20_000, message: "ap marks both others stale" });
      // The connected majority sees each other fresh; the cut-off region still answers for its own agent first.
      expect(await providers("eu")).toContain("geo-us@us");
      expect((await providers("ap"))[0]).toBe("geo-ap@ap");
      expect(registries.get("ap")!.view.get("geo-ap")?.status).toBe("ready");
    } finally {
      await sc.heal("ap");
    }
    for (const region of REGIONS) {
      await waitFor(async () => !(await providers(region)).some((p) => p.endsWith("(stale)")), { timeoutMs: 20_000, message: `${region} sees every region fresh again` });
    }
  });
});
