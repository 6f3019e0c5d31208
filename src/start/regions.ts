/**
 * Regional mode's global view (docs/architecture.md, "Regions"): a mirror in this region of each
 * other region's bucket, a read-only view of each fed from it, and this region's stream of every
 * region's events. Nothing here is waited for by readiness beyond creating the streams: a region
 * cut off at start is followed as soon as its mirror hears from it.
 */
import { RegionMirror } from "../adapters/nats/region-mirror.js";
import { openGlobalEvents } from "../adapters/nats/region-streams.js";
import { untilPlaced } from "../adapters/nats/until-placed.js";
import { peerRegions, regionBucket } from "../config/region.js";
import { RegistryView } from "../domain/view/view.js";
import { RemoteRegions } from "../service/view/remote-regions.js";
import type { Nats, StartContext } from "./context.js";

export async function followRegions(ctx: StartContext, { nc }: Nats): Promise<RemoteRegions | null> {
  const { config, log } = ctx;
  const region = config.region;
  if (region === undefined) return null;
  const placing = { signal: ctx.signal, log, replicas: config.replicas };
  const global = await untilPlaced(
    "the global events stream",
    () =>
      openGlobalEvents(nc, {
        eventsStream: config.eventsStream,
        region,
        regions: config.regions ?? [region],
        prefix: config.prefix,
        replicas: config.replicas,
        maxAgeMs: config.eventsMaxAgeMs,
        maxBytes: config.eventsMaxBytes,
        timeoutMs: config.requestTimeoutMs,
      }),
    placing,
  );
  if (global.created) log.info({ stream: global.name }, "created the global events stream");
  const peers = peerRegions(config);
  if (peers.length === 0) return null;
  const regions = [];
  for (const peer of peers) {
    const source = regionBucket(config.bucket, peer);
    const opened = await untilPlaced(
      `the mirror of ${source}`,
      () => RegionMirror.open(nc, { source, region, replicas: config.replicas, history: config.history, timeoutMs: config.requestTimeoutMs }),
      placing,
    );
    if (opened.created) log.info({ stream: opened.mirror.stream, region: peer }, "created the mirror of another region's bucket");
    regions.push({ name: peer, source: opened.mirror, view: new RegistryView(ctx.clock) });
  }
  const remote = new RemoteRegions({ regions, log: ctx.root.child({ component: "regions" }), now: () => ctx.clock.now(), staleAfterMs: config.remoteStaleMs });
  await remote.start();
  ctx.teardown.defer("stopping the remote regions' views", () => remote.stop());
  return remote;
}
