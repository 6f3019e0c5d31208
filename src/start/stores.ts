/**
 * The bucket, the lease's own bucket writer on a connection of its own, the events stream and
 * the event publisher.
 */
import { jetstream } from "@nats-io/jetstream";
import { KvStore, openBucket, openBucketWriter, openWatchHandle } from "../adapters/nats/kv-store.js";
import { untilPlaced } from "../adapters/nats/until-placed.js";
import { EventStream } from "../adapters/nats/event-stream.js";
import { storeNames } from "../config/region.js";
import { utf8 } from "../kit/utf8.js";
import { canReadWriteBacklog, giveWayPublisher, writeBacklogBytes } from "../adapters/nats/write-backlog.js";
import { connectionName, registryConnectSettings, registryConnectionOptions } from "../adapters/nats/nats-connection.js";
import { connectUntilUp } from "../kit/connect-until-up.js";
import { monitorConnection } from "../adapters/nats/connection-monitor.js";
import { EventPublisher } from "../service/events/event-publisher.js";
import type { StoreWriter } from "../domain/ports.js";
import { untilAborted, withDeadline, type StartContext, type Nats, type Stores } from "./context.js";

/**
 * The evictor lease's own connection, and its writer to the bucket. On the API connection a
 * renewal's answer waited behind everything nats-server had queued for it: under overload,
 * seconds of heartbeats, so renewals timed out and the replica gave its lease up and took it
 * back, each time with a new grace window (docs/performance.md, fifth round). On a connection
 * of its own a renewal waits only for the store. The lease still renews only while the API
 * connection is up (EvictorLease `hearing`): the replica must hear the fleet it evicts.
 */
export async function openLeaseStore(ctx: StartContext, { servers }: Nats): Promise<StoreWriter> {
  const { config, teardown } = ctx;
  const log = ctx.root.child({ component: "lease" });
  const nc = await connectUntilUp(registryConnectionOptions(config, servers, connectionName(ctx.replicaName, "lease")), { signal: ctx.signal, log });
  teardown.defer("closing the lease's NATS connection", () => (nc.isClosed() ? undefined : nc.drain()));
  monitorConnection(nc, log, {
    onUp: (up) => {
      // A closed connection is the stop's doing (or onClosed's fatal error), not an outage to wait out.
      if (!up && !nc.isClosed()) log.warn("renewals fail until the lease's connection is back, and the lease is given up after two thirds of REGISTRY_LEASE_MS");
    },
    onClosed: (err) => ctx.fatal("the lease's NATS connection closed", err),
  });
  return untilAborted(openBucketWriter(nc, storeNames(config).bucket, config.requestTimeoutMs), ctx.signal);
}

export async function openStores(ctx: StartContext, { nc, servers }: Nats): Promise<Stores> {
  const { config, log } = ctx;
  // Regional mode: the region's own bucket and stream, placed in its cluster (config/region.ts).
  const { bucket: bucketName, eventsStream } = storeNames(config);
  const region = config.region;
  const js = jetstream(nc, { timeout: config.requestTimeoutMs });
  // A cluster still forming refuses replicated creates for a while: wait it out (until-placed.ts).
  const placing = { signal: ctx.signal, log, replicas: config.replicas, onWait: (reason: string) => (ctx.status.storesWaiting = reason) };
  const bucket = await untilPlaced(
    `the KV bucket ${bucketName}`,
    () => openBucket(js, { bucket: bucketName, replicas: config.replicas, history: config.history, maxBytes: config.bucketMaxBytes, timeoutMs: config.requestTimeoutMs, region }),
    placing,
  );
  if (bucket.check.created) log.info({ bucket: bucketName }, "created the KV bucket");
  for (const m of bucket.check.mismatches) log.warn({ bucket: bucketName }, `bucket settings differ: ${m}`);
  // The byte budgets count each key as the values the bucket really keeps of it.
  ctx.view.bytes.keptValues = bucket.check.history;
  if (bucket.check.history < 2) {
    log.warn(
      { bucket: bucketName },
      "the bucket keeps one value per key: a value overwritten before the replicas' watches read it is seen by none, and events a replica could not store before it died cannot be recovered (REGISTRY_HISTORY, docs/configuration.md)",
    );
  }
  const events = await untilPlaced(
    `the events stream ${eventsStream}`,
    () => EventStream.open(nc, ctx.subjects, { name: eventsStream, replicas: config.replicas, maxAgeMs: config.eventsMaxAgeMs, maxBytes: config.eventsMaxBytes, timeoutMs: config.requestTimeoutMs, ...(region === undefined ? {} : { region }) }),
    placing,
  );
  if (events.created) log.info({ stream: eventsStream }, "created the events stream");
  for (const m of events.mismatches) log.warn({ stream: eventsStream }, `stream settings differ: ${m}`);
  const watchKv = await openWatchHandle(nc, bucketName, config.requestTimeoutMs);
  ctx.status.storesOpen = true;
  ctx.status.storesWaiting = undefined;
  // A large bucket's last values are read by a worker thread on a connection of its own (last-values-load.ts).
  const workerLoad =
    config.loadWorkerMinEntries > 0 ? { connection: registryConnectSettings(config, servers, connectionName(ctx.replicaName, "loader")), minEntries: config.loadWorkerMinEntries } : undefined;
  return { store: new KvStore(bucket.kv, { nc, bucket: bucketName, timeoutMs: config.requestTimeoutMs, history: bucket.check.history, observeWrite: ctx.metrics.storeWriteDuration.bind({}) }, watchKv, workerLoad), events: events.stream };
}

export function startPublisher(ctx: StartContext, { nc }: Nats, stores: Stores): EventPublisher {
  const { metrics } = ctx;
  let dropped = 0;
  const announce = giveWayPublisher(nc, () => dropped++);
  metrics.pendingCounts.push(() => {
    if (dropped === 0) return;
    metrics.heartbeatEventsDropped.inc(dropped);
    dropped = 0;
  });
  metrics.sources.writeBacklogBytes = () => writeBacklogBytes(nc);
  if (!canReadWriteBacklog(nc)) {
    ctx.root.warn("cannot read the NATS connection's unsent output (another nats.js transport?): heartbeat events and replies will not give way when nats-server falls behind");
  }
  const publisher = new EventPublisher({
    sink: stores.events,
    subjects: ctx.subjects,
    log: ctx.root.child({ component: "events" }),
    now: () => ctx.clock.now(),
    replica: ctx.replicaName,
    // Heartbeat events give way to replies when nats-server reads slower than we write (write-backlog.ts).
    announce: ctx.config.heartbeatEvents ? (subject, json) => announce(subject, utf8(json)) : undefined,
    hooks: { onPublished: () => metrics.eventsPublished.inc(), onFailure: () => metrics.eventPublishFailures.inc() },
  });
  publisher.start();
  ctx.teardown.defer("stopping the publisher", () => publisher.stop());
  // Runs before the publisher stops: what the leader still holds gets up to 3 s to be stored.
  ctx.teardown.defer("flushing events", () => withDeadline(publisher.flush(), 3000));
  return publisher;
}
