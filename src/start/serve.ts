/**
 * Ready: the evictor election joined, and the gauges that need a running registry.
 */
import { FleetGauges } from "../adapters/http/fleet-gauges.js";
import type { StartContext, Nats, Stores, UseCases } from "./context.js";

/** How full the bucket is, every 30 s (a JetStream info call), when it has a max_bytes. */
const STORE_SIZE_EVERY_MS = 30_000;

/** Ready: the server has our subscriptions, the replica joins the evictor election, gauges run. */
export async function serve(ctx: StartContext, { nc }: Nats, { lease, evictor }: UseCases, { store }: Stores): Promise<void> {
  await nc.flush();
  ctx.status.endpointsUp = true;
  lease.start();
  ctx.teardown.defer("releasing the lease", () => lease.release());
  ctx.teardown.defer("stopping the evictor", () => evictor.stop());
  const gauges = new FleetGauges(ctx.view, ctx.metrics, ctx.config, ctx.root.child({ component: "gauges" }));
  gauges.start();
  ctx.teardown.defer("stopping the fleet gauges", () => gauges.stop());
  const maxBytes = ctx.config.bucketMaxBytes;
  if (maxBytes > 0) {
    const measure = (): void =>
      void store.bytes().then(
        (bytes) => ctx.metrics.limitUsage.set({ limit: "bucket_bytes" }, bytes / maxBytes),
        (err: unknown) => ctx.log.debug({ err }, "could not read the bucket's size"),
      );
    measure();
    const timer = setInterval(measure, STORE_SIZE_EVERY_MS).unref();
    ctx.teardown.defer("stopping the bucket size gauge", () => clearInterval(timer));
  }
}
