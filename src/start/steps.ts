/**
 * The steps of a registry start, in the order main.ts runs them. Each step opens one thing,
 * registers its close on the teardown stack as soon as it exists, and returns what later steps
 * need, so no step reaches for something that may not be there yet.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstream } from "@nats-io/jetstream";
import type { Registry as MetricsRegistry } from "prom-client";
import type { Config } from "../config/service.js";
import type { RegistryView } from "../domain/view/view.js";
import type { SchemaChecks } from "../domain/spec/validation.js";
import { TypeBudgets } from "../domain/rate-limit.js";
import { EventType } from "../protocol/events.js";
import type { Subjects } from "../protocol/subjects.js";
import { KvStore, openBucket, openBucketWriter, openWatchHandle } from "../adapters/nats/kv-store.js";
import { untilPlaced } from "../adapters/nats/until-placed.js";
import { EventStream } from "../adapters/nats/event-stream.js";
import { startEndpoints } from "../adapters/nats/endpoints.js";
import { utf8 } from "../kit/utf8.js";
import { canReadWriteBacklog, giveWayPublisher, writeBacklogBytes } from "../adapters/nats/write-backlog.js";
import { checkServer, connectionName, hasCredentials, noAuthWarning, registryConnectSettings, registryConnectionOptions, resolveServer } from "../adapters/nats/nats-connection.js";
import { connectUntilUp } from "../kit/connect-until-up.js";
import { monitorConnection } from "../adapters/nats/connection-monitor.js";
import { requestObserver, setBuildInfo, type RegistryMetrics } from "../adapters/http/metrics.js";
import type { OpsServer } from "../kit/ops-server.js";
import { FleetGauges } from "../adapters/http/fleet-gauges.js";
import { SchemaPool } from "../adapters/workers/schema-pool.js";
import { PooledSchemaChecks } from "../service/schema-checks.js";
import { PayloadCheckPool } from "../adapters/workers/payload-check-pool.js";
import { PooledPayloadChecks, type PayloadChecks } from "../service/payload-checks.js";
import { readText, watchFile } from "../adapters/file/watched-file.js";
import { ViewFeed } from "../service/view-feed.js";
import { Registrar } from "../service/registrar.js";
import { SchemaRegistrar } from "../service/schema-registrar.js";
import { QueryService } from "../service/queries.js";
import { DEFAULT_MAX_PAYLOAD } from "../kit/nats-limits.js";
import { EventPublisher } from "../service/event-publisher.js";
import { EvictorLease, readPublishedThrough } from "../service/evictor-lease.js";
import { Evictor, stallThresholdMs } from "../service/evictor.js";
import { StaticRegistry, parseRegistryFile, type FileWarnings, type LoadedRegistryFile } from "../service/static-registry.js";
import type { Clock } from "../service/clock.js";
import type { Logger } from "../kit/logger.js";
import type { TeardownStack } from "../teardown-stack.js";
import { LEASE_KEY } from "../domain/model/records.js";
import type { StoreWriter } from "../domain/ports.js";
import { RegistryClient } from "../client/registry-client.js";
import { HeardFanout, natsHeardBus } from "../service/heard-fanout.js";
import { byteBudgetsOf } from "../domain/lifecycle/byte-budgets.js";
import { TrustGate } from "../service/trust-gate.js";
import { TrustRoots } from "../domain/trust/trust-roots.js";
import { loadTrustFile } from "../adapters/file/trust-file.js";

/** What every step may use: the parts built by createRegistry, and the start's own state. */
export type StartContext = {
  readonly config: Config;
  readonly clock: Clock;
  readonly replicaName: string;
  readonly version: string;
  readonly root: Logger;
  readonly log: Logger;
  readonly metrics: RegistryMetrics & { registry: MetricsRegistry };
  readonly subjects: Subjects;
  readonly view: RegistryView;
  readonly ops: OpsServer;
  readonly teardown: TeardownStack;
  /** Aborted by stop(): a step that waits (connecting, loading the view) gives up at once. */
  readonly signal: AbortSignal;
  /** Readiness inputs that steps switch on (and their closes off); /readyz reads them. */
  readonly status: RuntimeStatus;
  /** A part died by itself (the connection closed for good, the endpoints stopped): stop the service. */
  readonly fatal: (reason: string, err?: unknown) => void;
};

export type RuntimeStatus = {
  nc: NatsConnection | null;
  natsUrl: string | undefined;
  natsUp: boolean;
  storesOpen: boolean;
  /** Why the stores are not open yet, while the start waits for a forming cluster (until-placed.ts). */
  storesWaiting?: string;
  endpointsUp: boolean;
  viewLoaded: () => boolean;
};

/** The connection's events, for the parts built after it. */
export type ConnectionEvents = { onDown: Array<() => void>; onReconnect: Array<() => void> };
/** `servers`: what the connection was made to, for the replica's other connection (the lease's). */
export type Nats = { nc: NatsConnection; servers: string; events: ConnectionEvents };
export type Stores = { store: KvStore; events: EventStream };
export type UseCases = {
  feed: ViewFeed;
  registrar: Registrar;
  schemas: SchemaRegistrar;
  queries: QueryService;
  evictor: Evictor;
  lease: EvictorLease;
  fileWarnings: FileWarnings;
  /** REGISTRY_LIVENESS=memory: tells the other replicas which heartbeats this one answered from memory. */
  fanout: HeardFanout | null;
};

/** The schema checks, and a promise that resolves once a worker thread is ready to compile. */
export type SchemaChecksStep = { readonly checker: SchemaChecks; readonly warmed: Promise<void> };

/**
 * Capability schemas are compiled by worker threads. First on the teardown stack, so last
 * closed: registrations still in flight while the endpoints drain get their verdicts. A
 * worker starts loading at once, alongside the connection and the view.
 */
export function startSchemaChecks(ctx: StartContext): SchemaChecksStep {
  const { config, metrics } = ctx;
  const log = ctx.root.child({ component: "schema-workers" });
  const pool = new SchemaPool({
    workers: config.schemaWorkers,
    queue: config.schemaCheckQueue,
    timeoutMs: config.schemaCheckTimeoutMs,
    onWorkerLost: (reason, err) => {
      metrics.schemaWorkersLost.inc({ reason });
      if (reason === "boot") log.error({ err }, "schema check workers cannot start: registrations get 503 until one does");
      else log.warn({ err, reason }, "a schema check worker was stopped and will be replaced; the schema it compiled was refused");
    },
  });
  ctx.teardown.defer("stopping the schema check workers", () => pool.close());
  const warmed = pool.warm();
  warmed.catch(() => undefined); // awaited by awaitSchemaWorkers; a start that fails before must not leave it unhandled
  return { checker: new PooledSchemaChecks(pool), warmed };
}

/**
 * Payloads (the `check` op) are validated by worker threads of their own, with a time budget
 * and a bounded queue: a hostile check costs a worker its budget, never the event loop. Next
 * to the schema checks on the teardown stack, for the same reason. No worker is loaded until
 * the first check.
 */
export function startPayloadChecks(ctx: StartContext): PayloadChecks {
  const { config, metrics } = ctx;
  const log = ctx.root.child({ component: "payload-check-workers" });
  const pool = new PayloadCheckPool({
    workers: config.payloadCheckWorkers,
    queue: config.payloadCheckQueue,
    timeoutMs: config.payloadCheckTimeoutMs,
    compileTimeoutMs: config.schemaCheckTimeoutMs,
    onWorkerLost: (reason, err) => {
      metrics.payloadCheckWorkersLost.inc({ reason });
      if (reason === "boot") log.error({ err }, "payload check workers cannot start: checks get 503 until one does");
      else log.warn({ err, reason }, "a payload check worker was stopped and will be replaced; the check it ran was refused");
    },
  });
  ctx.teardown.defer("stopping the payload check workers", () => pool.close());
  return new PooledPayloadChecks(pool);
}

/** The endpoints open once a schema worker is ready, so no registration waits for one to load. */
export async function awaitSchemaWorkers(ctx: StartContext, { warmed }: SchemaChecksStep): Promise<void> {
  await untilAborted(warmed, ctx.signal);
}

export async function listenOps(ctx: StartContext): Promise<void> {
  await ctx.ops.listen();
  ctx.teardown.defer("closing the ops server", () => ctx.ops.close());
}

export async function connectNats(ctx: StartContext): Promise<Nats> {
  const { config, status, teardown, log } = ctx;
  const resolved = await resolveServer(config, log);
  const embedded = resolved.embedded;
  if (embedded) teardown.defer("stopping the embedded nats-server", () => embedded.stop());
  status.natsUrl = resolved.servers;
  const nc = await connectUntilUp(registryConnectionOptions(config, resolved.servers, connectionName(ctx.replicaName, "api")), { signal: ctx.signal, log });
  status.nc = nc;
  teardown.defer("draining NATS", () => (nc.isClosed() ? undefined : nc.drain()));
  const events: ConnectionEvents = { onDown: [], onReconnect: [] };
  monitorConnection(
    nc,
    log,
    {
      onUp: (up) => {
        status.natsUp = up;
        if (!up) for (const f of events.onDown) f();
      },
      onReconnect: () => {
        for (const f of events.onReconnect) f();
      },
      onClosed: (err) => ctx.fatal("nats connection closed", err),
      // Every subscription of this connection is one the registry needs (API, watches, replies).
      onSubscriptionDenied: (subject, err) => ctx.fatal(`the NATS server took away the subscription to ${subject}`, err),
    },
    ctx.metrics,
  );
  const server = checkServer(nc);
  setBuildInfo(ctx.metrics, ctx.version, server.version);
  log.info({ server: server.version, clustered: server.clustered }, "connected to NATS");
  for (const w of server.warnings) log.warn(w);
  const noAuth = noAuthWarning(nc.getServer(), hasCredentials(config), nc.info?.auth_required);
  if (noAuth) log.warn({ server: nc.getServer(), auth_required: nc.info?.auth_required ?? false }, noAuth);
  // With per-user permissions in place, the one hole they cannot close is the body's tenant_scope.
  if (hasCredentials(config) && config.plainTenantScope === "allow") {
    log.warn(
      "REGISTRY_PLAIN_TENANT_SCOPE=allow (the default): an agent user may put its agent type in any tenant through the plain register subject; once tenant agents register on registry.tenant.<tenant>.register.<type>, set it to refuse (docs/security.md, Tenants)",
    );
  }
  return { nc, servers: resolved.servers, events };
}

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
  return untilAborted(openBucketWriter(nc, config.bucket, config.requestTimeoutMs), ctx.signal);
}

export async function openStores(ctx: StartContext, { nc, servers }: Nats): Promise<Stores> {
  const { config, log } = ctx;
  const js = jetstream(nc, { timeout: config.requestTimeoutMs });
  // A cluster still forming refuses replicated creates for a while: wait it out (until-placed.ts).
  const placing = { signal: ctx.signal, log, replicas: config.replicas, onWait: (reason: string) => (ctx.status.storesWaiting = reason) };
  const bucket = await untilPlaced(
    `the KV bucket ${config.bucket}`,
    () => openBucket(js, { bucket: config.bucket, replicas: config.replicas, history: config.history, maxBytes: config.bucketMaxBytes, timeoutMs: config.requestTimeoutMs }),
    placing,
  );
  if (bucket.check.created) log.info({ bucket: config.bucket }, "created the KV bucket");
  for (const m of bucket.check.mismatches) log.warn({ bucket: config.bucket }, `bucket settings differ: ${m}`);
  // The byte budgets count each key as the values the bucket really keeps of it.
  ctx.view.bytes.keptValues = bucket.check.history;
  if (bucket.check.history < 2) {
    log.warn(
      { bucket: config.bucket },
      "the bucket keeps one value per key: a value overwritten before the replicas' watches read it is seen by none, and events a replica could not store before it died cannot be recovered (REGISTRY_HISTORY, docs/configuration.md)",
    );
  }
  const events = await untilPlaced(
    `the events stream ${config.eventsStream}`,
    () => EventStream.open(nc, ctx.subjects, { name: config.eventsStream, replicas: config.replicas, maxAgeMs: config.eventsMaxAgeMs, maxBytes: config.eventsMaxBytes, timeoutMs: config.requestTimeoutMs }),
    placing,
  );
  if (events.created) log.info({ stream: config.eventsStream }, "created the events stream");
  for (const m of events.mismatches) log.warn({ stream: config.eventsStream }, `stream settings differ: ${m}`);
  const watchKv = await openWatchHandle(nc, config.bucket, config.requestTimeoutMs);
  ctx.status.storesOpen = true;
  ctx.status.storesWaiting = undefined;
  // A large bucket's last values are read by a worker thread on a connection of its own (last-values-load.ts).
  const workerLoad =
    config.loadWorkerMinEntries > 0 ? { connection: registryConnectSettings(config, servers, connectionName(ctx.replicaName, "loader")), minEntries: config.loadWorkerMinEntries } : undefined;
  return { store: new KvStore(bucket.kv, { nc, bucket: config.bucket, timeoutMs: config.requestTimeoutMs, history: bucket.check.history }, watchKv, workerLoad), events: events.stream };
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

/** Builds the use cases and wires them to each other; nothing starts yet. */
export function buildUseCases(
  ctx: StartContext,
  nats: Nats,
  { store, events }: Stores,
  leaseStore: StoreWriter,
  publisher: EventPublisher,
  checker: SchemaChecks,
  payloads: PayloadChecks,
  trustRoots: TrustRoots = TrustRoots.none,
): UseCases {
  const { config, clock, metrics, view, root } = ctx;
  const evictor = new Evictor({
    store,
    view,
    clock,
    log: root.child({ component: "evictor" }),
    policy: { missedHeartbeats: config.missedHeartbeats, selfPreservationRatio: config.selfPreservationRatio },
    tickMs: config.evictionTickMs,
    retentionMs: config.retentionMs,
    stallMs: stallThresholdMs(config.leaseMs, config.evictionTickMs),
    liveness: config.liveness,
    hooks: {
      onEvicted: () => metrics.evictions.inc(),
      onMarked: () => metrics.suspectMarks.inc(),
      onStall: () => metrics.evictorStalls.inc(),
      onSelfPreservation: (active, detail) => {
        metrics.selfPreservationActive.set(active ? 1 : 0);
        void publisher.selfPreservationAlert({ active, ...detail, threshold: config.selfPreservationRatio });
      },
    },
  });
  const lease = new EvictorLease({
    store: leaseStore,
    clock,
    log: root.child({ component: "lease" }),
    holder: ctx.replicaName,
    leaseMs: config.leaseMs,
    liveness: config.liveness,
    hearing: () => ctx.status.natsUp,
    // Only once loaded: before, the view has not applied (nor enqueued the events of) the store.
    publishedThrough: () => (feed.loaded ? publisher.storedThrough(view.revision) : null),
    listener: {
      onAcquired: (since) => {
        metrics.evictorLeader.set(1);
        evictor.start(since);
        void publisher.becomeLeader();
      },
      onLost: () => {
        metrics.evictorLeader.set(0);
        evictor.stop();
        publisher.stepDown();
      },
    },
  });
  const feed = new ViewFeed({
    store,
    view,
    log: root.child({ component: "view" }),
    onEvents: (evs) => {
      for (const e of evs) if (e.type === EventType.AgentDeregistered) metrics.deregistrations.inc({ reason: e.data.reason });
      publisher.enqueue(evs);
    },
    // Only the lease key is the lease's business: any other reserved key read as a lease
    // would look like the lease taken by nobody and make the evicting replica step down.
    onReserved: (entry) => {
      if (entry.key === LEASE_KEY) lease.observe(entry);
    },
    onRestart: () => metrics.watchRestarts.inc(),
    onLag: (lag) => {
      metrics.viewLag.set(lag);
      metrics.viewRevision.set(view.revision);
    },
    onUnreadable: () => metrics.storeRecordsUnreadable.inc(),
    maxRevisionWaiters: config.maxRevisionWaiters,
    history: store,
    lastStoredRevision: async () => (await events.lastPosition())?.revision ?? null,
    publishedThrough: () => readPublishedThrough(store),
    onUnrecoverable: (keys) => metrics.eventsUnrecoverable.inc(keys),
  });
  // Best effort: if the store is away, the caller's own read or write says so.
  const catchUp = (): Promise<void> =>
    store
      .lastRevision()
      .then((rev) => feed.waitForRevision(rev, 1000))
      .then(
        () => undefined,
        () => undefined,
      );
  const fanout =
    config.liveness === "memory"
      ? new HeardFanout({
          bus: natsHeardBus(nats.nc, root.child({ component: "fanout" })),
          subjectRoot: ctx.subjects.replicaHeard,
          replica: ctx.replicaName,
          periodMs: config.fanoutPeriodMs,
          log: root.child({ component: "fanout" }),
          // On this replica's clock, as every deadline: a peer's entry carries no time.
          onHeard: (agentType, instanceId, activeTasks) => void view.heard(agentType, instanceId, clock.now(), activeTasks),
          onBatchesLost: (n) => metrics.heardBatchesLost.inc(n),
        })
      : null;
  const registrar = new Registrar({
    store,
    view,
    checker,
    clock,
    memoryLiveness: fanout
      ? {
          // Only under a holder that evicts with suspect marks (an older one hears store writes only), and once the fan-out is proven.
          enabled: () => fanout.started && lease.holderLiveness === "memory",
          heard: (agentType, instanceId, activeTasks) => {
            metrics.heartbeatsFromMemory.inc();
            fanout.note(agentType, instanceId, activeTasks);
          },
        }
      : undefined,
    settings: { ...config, ...byteBudgetsOf(config), heartbeatSubject: ctx.subjects.heartbeat },
    onConflict: () => metrics.storeConflicts.inc(),
    onStatusHeld: () => metrics.statusChangesHeld.inc(),
    onUnavailable: () => evictor.storeUnavailable(clock.now()),
    catchUp,
    viewAt: async (revision) => (await feed.waitForRevision(revision, VIEW_AT_MS)) === "reached",
    specBudget: config.typeSpecCheckMs > 0 ? new TypeBudgets(config.typeSpecCheckMs, 20 * config.typeSpecCheckMs) : undefined,
    log: root.child({ component: "registrar" }),
    trust: new TrustGate(trustRoots),
  });
  ctx.teardown.defer("dropping held status changes", () => registrar.stop());
  const schemas = new SchemaRegistrar({ store, view, checker, clock, maxSchemas: config.maxSchemas, bucketMaxBytes: config.bucketMaxBytes, catchUp });
  const fileWarnings: FileWarnings = { current: [] };
  const queries = new QueryService(view, (rev, ms) => feed.waitForRevision(rev, ms), {
    fileWarnings: () => fileWarnings.current,
    log: root.child({ component: "queries" }),
    maxPayload: () => nats.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
    onUnresolvedRef: () => metrics.schemaRefsUnresolved.inc(),
    payloads,
  });
  nats.events.onDown.push(() => {
    evictor.disconnected();
    fanout?.disconnected();
  });
  nats.events.onReconnect.push(() => {
    evictor.reconnected(clock.now());
    fanout?.reconnected();
    feed.restart("reconnected");
  });
  return { feed, registrar, schemas, queries, evictor, lease, fileWarnings, fanout };
}

/**
 * REGISTRY_LIVENESS=memory: the fan-out must carry this replica's own probe before the
 * endpoints open. Without its permission every follower would write a mark and a clear for
 * each heartbeat the evictor never hears of; failing the start says so at once.
 */
export async function startFanout(ctx: StartContext, { fanout }: UseCases): Promise<void> {
  if (!fanout) return;
  await untilAborted(fanout.start(), ctx.signal);
  ctx.teardown.defer("stopping the heard fan-out", () => fanout.stop());
  ctx.log.info({ subject: fanout.ownSubject }, "memory liveness: heartbeats answered from memory, the heard fan-out is up");
}

export async function loadView(ctx: StartContext, { feed }: UseCases): Promise<void> {
  await feed.start();
  ctx.teardown.defer("stopping the view feed", () => feed.stop());
  await untilAborted(feed.whenLoaded(), ctx.signal);
  ctx.metrics.viewRevision.set(ctx.view.revision);
  ctx.log.info({ revision: ctx.view.revision, agents: ctx.view.size }, "view loaded");
}

/** The ops server's /agents/<agent_type>/agent-card.json and toolspec.json: the `card` and `toolspec` queries, for shared agents. */
export function serveAgentDocuments(ctx: StartContext, { queries }: UseCases): void {
  const strip = ({ revision: _revision, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
  ctx.ops.serveAgentDocuments({
    card: async (agentType) => (strip((await queries.run("card", { agent_type: agentType }, null)) as Record<string, unknown>)["card"] as object),
    toolspec: async (agentType) => strip((await queries.run("toolspec", { agent_type: agentType }, null)) as Record<string, unknown>),
  });
}

/**
 * The API as one NATS micro service. If it stops by itself (a subscription closed under it),
 * the replica stops: an orchestrator restarts a process that exits, not one that looks fine.
 */
export async function openEndpoints(ctx: StartContext, { nc }: Nats, { registrar, schemas, queries }: UseCases, publisher: EventPublisher): Promise<void> {
  const { config } = ctx;
  const service = await startEndpoints({
    nc,
    prefix: config.prefix,
    version: ctx.version,
    limits: { maxBytes: config.maxPayloadBytes, maxDepth: config.maxDepth },
    typeRateLimit: config.typeRateLimit > 0 ? new TypeBudgets(config.typeRateLimit, Math.max(1, 2 * config.typeRateLimit)) : undefined,
    registrar,
    schemas,
    queries,
    log: ctx.root.child({ component: "api" }),
    observe: requestObserver(ctx.metrics),
    onHeartbeat: config.heartbeatEvents ? (agentType, instanceId, status, activeTasks) => publisher.heartbeat(agentType, instanceId, status, activeTasks) : undefined,
  });
  let closing = false;
  ctx.teardown.defer("stopping the endpoints", () => {
    closing = true;
    ctx.status.endpointsUp = false;
    return service.stop();
  });
  void service.stopped.then((err) => {
    ctx.status.endpointsUp = false;
    if (!closing) ctx.fatal("the API endpoints stopped", err ?? undefined);
  });
}

/**
 * Reads the trust roots (REGISTRY_TRUST_FILE) before anything listens: a broken file stops the
 * start. No file: every tenant's mode is off.
 */
export async function readTrustRoots(ctx: StartContext): Promise<TrustRoots> {
  const path = ctx.config.trustFile;
  if (!path) return TrustRoots.none;
  const roots = await loadTrustFile(path);
  ctx.log.info({ trust_file: path, enabled: roots.enabled }, "trust roots loaded");
  return roots;
}

/** The registry file as read and checked at start, before anything listens; null without one. */
export type StartRegistryFile = { path: string; text: string; file: LoadedRegistryFile } | null;

/**
 * Reads and checks the registry file first of all: a broken file stops the start, with the
 * file's own message, before the ops server or any endpoint has answered anyone.
 */
export async function readRegistryFile(ctx: StartContext): Promise<StartRegistryFile> {
  const path = ctx.config.registryFile;
  if (!path) return null;
  const text = await readText(path);
  return { path, text, file: parseRegistryFile(path, text, registryFileOptions(ctx)) };
}

// A v2 file's entries name no subject of their own: with a subject policy they take the policy's.
const registryFileOptions = (ctx: StartContext) => ({ subjectPolicy: ctx.config.subjectPolicy });

/** Applies the checked file before the endpoints open, so a replica's first answer already includes it; then watches it. */
export async function applyRegistryFile(ctx: StartContext, { registrar, schemas, fileWarnings }: UseCases, loaded: StartRegistryFile): Promise<void> {
  if (!loaded) return;
  const { path, text, file } = loaded;
  const statics = new StaticRegistry({
    registrar,
    view: ctx.view,
    log: ctx.root.child({ component: "registry-file" }),
    putSchema: (s) => schemas.put(s.name, { version: s.version, schema: s.schema, description: s.description }),
    onError: () => ctx.metrics.registryFileErrors.inc(),
    fileWarnings,
  });
  // What only applying can refuse (a schema a worker will not compile) stops the start too.
  const applied = await statics.applyFile(file);
  ctx.log.info({ path, kind: file.kind, schemas: file.schemas.length, agents: applied.registered.length, warnings: file.warnings.length }, "registry file loaded");
  const options = registryFileOptions(ctx);
  const watch = watchFile(path, (t, err) => void statics.reload(path, t, err, options), { initial: text });
  ctx.teardown.defer("closing the registry file watch", () => watch.close());
}

/** How full the bucket is, every 30 s (a JetStream info call), when it has a max_bytes. */
const STORE_SIZE_EVERY_MS = 30_000;
/** How long a dependency check waits for the view to apply the graph key's revision before answering 503. */
const VIEW_AT_MS = 2000;

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

/**
 * With REGISTRY_MCP_HTTP_PORT, the MCP endpoint of PROTOCOL.md section 13 beside the API: the
 * front of `agent-registry mcp --http-port`, asking the registry (whichever replica answers)
 * through the SDK client on this replica's connection, so it is a client like any other.
 * Closed before the endpoints stop, so its last answers still reach the API.
 */
export async function serveMcp(ctx: StartContext, { nc }: Nats): Promise<void> {
  const { config } = ctx;
  if (config.mcpHttpPort === undefined) return;
  // Loaded only when asked for: the MCP SDK is not part of every start.
  const { startHttpFront, toolContext } = await import("../mcp/run.js");
  const client = new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs });
  const log = ctx.root.child({ component: "mcp" });
  const tools = toolContext(client, nc, { delegateTimeoutMs: config.mcpDelegateTimeoutMs, maxDelegateTimeoutMs: config.mcpMaxDelegateTimeoutMs }, log);
  const settings = {
    httpPort: config.mcpHttpPort,
    httpHost: config.mcpHttpHost,
    token: config.mcpToken,
    allowedHosts: config.mcpAllowedHosts,
    allowedOrigins: config.mcpAllowedOrigins,
    delegate: config.mcpDelegate,
    httpSessions: config.mcpHttpSessions,
    maxSessions: config.mcpMaxSessions,
    sessionIdleMs: config.mcpSessionIdleMs,
  };
  const endpoint = await startHttpFront(settings, tools, log);
  ctx.teardown.defer("closing the MCP endpoint", () => endpoint.close());
}

/**
 * With DATABASE_URL, the audit mirror of docs/audit.md beside the API, on this replica's
 * connection and metrics registry, with the mirror's default settings: every replica runs one,
 * one of them writes (a PostgreSQL advisory lock), all answer `history`. Not part of readiness:
 * the registry serves whether or not its audit database answers (the mirror retries by itself).
 */
export async function serveAudit(ctx: StartContext, { nc }: Nats): Promise<void> {
  const url = ctx.config.databaseUrl;
  if (url === undefined) return;
  // Loaded only when asked for: pg is not part of every start.
  const [{ startMirror }, { createAuditMetrics }, { loadAuditConfig }] = await Promise.all([
    import("../audit/run.js"),
    import("../audit/metrics.js"),
    import("../config/audit.js"),
  ]);
  const config = loadAuditConfig({}, {}, { databaseUrl: url, eventsStream: ctx.config.eventsStream });
  const log = ctx.root.child({ component: "audit" });
  const parts = await startMirror({ nc, config, prefix: ctx.config.prefix, version: ctx.version, log, metrics: createAuditMetrics(ctx.metrics.registry, false) });
  ctx.teardown.defer("stopping the audit mirror", () => parts.close());
}

/** Resolves with `p`, or rejects with the abort reason as soon as `signal` aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function withDeadline(p: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([p, new Promise((r) => setTimeout(r, ms).unref())]);
}
