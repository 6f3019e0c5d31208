/**
 * The use cases built and wired to each other, then the view loaded and the heard-heartbeat fan-
 * out started.
 */
import type { SchemaChecks } from "../domain/spec/validation.js";
import { TypeBudgets } from "../domain/rate-limit.js";
import { EventType } from "../protocol/events.js";
import { type PayloadChecks } from "../service/queries/payload-checks.js";
import { ViewFeed } from "../service/view/view-feed.js";
import { Registrar } from "../service/registration/registrar.js";
import { SchemaRegistrar } from "../service/registration/schema-registrar.js";
import { QueryService } from "../service/queries/queries.js";
import { DEFAULT_MAX_PAYLOAD } from "../kit/nats-limits.js";
import type { EventPublisher } from "../service/events/event-publisher.js";
import { EvictorLease, readPublishedThrough } from "../service/liveness/evictor-lease.js";
import { Evictor, stallThresholdMs } from "../service/liveness/evictor.js";
import { type FileWarnings } from "../service/registration/static-registry.js";
import { LEASE_KEY } from "../domain/model/records.js";
import type { StoreWriter } from "../domain/ports.js";
import { HeardFanout, natsHeardBus } from "../service/liveness/heard-fanout.js";
import { byteBudgetsOf } from "../domain/lifecycle/byte-budgets.js";
import { TrustGate } from "../service/registration/trust-gate.js";
import { BucketTrustOps } from "../service/registration/bucket-trust-ops.js";
import { TrustRejudge } from "../service/registration/trust-rejudge.js";
import { Approvals } from "../service/registration/approvals.js";
import { Deprecations } from "../service/registration/deprecations.js";
import { TrustRoots } from "../domain/trust/trust-roots.js";
import type { CardSigner } from "../domain/trust/card-signer.js";
import type { Logger } from "../kit/logger.js";
import { untilAborted, type StartContext, type Nats, type Stores, type UseCases } from "./context.js";

/** How long a dependency check waits for the view to apply the graph key's revision before answering 503. */
const VIEW_AT_MS = 2000;

/** Builds the use cases and wires them to each other; nothing starts yet. */
export function buildUseCases(
  ctx: StartContext,
  nats: Nats,
  stores: Stores,
  leaseStore: StoreWriter,
  publisher: EventPublisher,
  checker: SchemaChecks,
  payloads: PayloadChecks,
  trustRoots: TrustRoots = TrustRoots.none,
  cardSigner?: CardSigner,
): UseCases {
  const { config, clock, metrics, view, root } = ctx;
  const { store } = stores;
  const evictor = buildEvictor(ctx, store, publisher);
  // The lease reads the feed's progress and the feed hands the lease its key: each reaches the
  // other through a closure, so the feed is read only once both exist.
  const built: { feed?: ViewFeed } = {};
  const lease = buildLease(ctx, leaseStore, evictor, publisher, () => (built.feed?.loaded ? publisher.storedThrough(view.revision) : null));
  const viewFeed = (built.feed = buildFeed(ctx, stores, publisher, lease));
  const catchUp = viewCatchUp(store, viewFeed, root.child({ component: "catch-up" }));
  const fanout = config.liveness === "memory" ? buildFanout(ctx, nats) : null;
  const trustGate = new TrustGate(trustRoots);
  const registrar = buildRegistrar(ctx, { store, checker, evictor, lease, feed: viewFeed, fanout, catchUp, trustGate });
  const trustRejudge = new TrustRejudge({ store, view, clock, log: root.child({ component: "trust" }), roots: () => trustGate.roots, onRewritten: () => metrics.trustRejudged.inc() });
  ctx.teardown.defer("dropping held status changes", () => registrar.stop());
  const schemas = new SchemaRegistrar({ store, view, checker, clock, maxSchemas: config.maxSchemas, bucketMaxBytes: config.bucketMaxBytes, catchUp });
  const fileWarnings: FileWarnings = { current: [] };
  // Regional mode: the other regions are followed after the home view has loaded (start/regions.ts).
  const regional: UseCases["regional"] = { current: null };
  const home = config.region;
  const queries = new QueryService(view, (rev, ms) => viewFeed.waitForRevision(rev, ms), {
    regions: () => (home === undefined ? null : { home, remote: regional.current?.regions ?? [] }),
    fileWarnings: () => fileWarnings.current,
    log: root.child({ component: "queries" }),
    maxPayload: () => nats.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
    onUnresolvedRef: () => metrics.schemaRefsUnresolved.inc(),
    payloads,
    ...(cardSigner ? { cardSigner } : {}),
  });
  const approvals = new Approvals({
    store,
    view,
    clock,
    listBytes: () => queries.listBytes(),
    waitForRevision: (rev, ms) => viewFeed.waitForRevision(rev, ms),
  });
  const deprecations = new Deprecations({ store, clock });
  nats.events.onDown.push(() => {
    evictor.disconnected();
    fanout?.disconnected();
  });
  nats.events.onReconnect.push(() => {
    evictor.reconnected(clock.now());
    fanout?.reconnected();
    viewFeed.restart("reconnected");
  });
  const bucketTrust = new BucketTrustOps({ store, clock, gate: trustGate });
  return { feed: viewFeed, registrar, schemas, queries, approvals, bucketTrust, deprecations, evictor, lease, fileWarnings, fanout, trust: { gate: trustGate, rejudge: trustRejudge }, regional };
}

function buildEvictor({ config, clock, metrics, view, root }: StartContext, store: Stores["store"], publisher: EventPublisher): Evictor {
  return new Evictor({
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
}

function buildLease(ctx: StartContext, leaseStore: StoreWriter, evictor: Evictor, publisher: EventPublisher, publishedThrough: () => number | null): EvictorLease {
  const { config, clock, metrics, root } = ctx;
  return new EvictorLease({
    store: leaseStore,
    clock,
    log: root.child({ component: "lease" }),
    holder: ctx.replicaName,
    leaseMs: config.leaseMs,
    liveness: config.liveness,
    hearing: () => ctx.status.natsUp,
    // Only once loaded: before, the view has not applied (nor enqueued the events of) the store.
    publishedThrough,
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
}

function buildFeed({ config, metrics, view, root }: StartContext, { store, events }: Stores, publisher: EventPublisher, lease: EvictorLease): ViewFeed {
  return new ViewFeed({
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
}

/**
 * The registrar's and schema registrar's catch-up: brings the view to the store's last revision
 * (bounded wait) before a write that reads it. Best effort, since a store that is away makes the
 * caller's own read or write fail and say so; the reason is logged here rather than dropped.
 */
function viewCatchUp(store: Stores["store"], feed: ViewFeed, log: Logger): () => Promise<void> {
  return () =>
    store
      .lastRevision()
      .then((rev) => feed.waitForRevision(rev, 1000))
      .then(
        () => undefined,
        (err: unknown) => log.debug({ err }, "catching the view up before a write failed; the write goes on and reads the store itself"),
      );
}

function buildFanout({ config, clock, metrics, view, root, subjects, replicaName }: StartContext, nats: Nats): HeardFanout {
  const log = root.child({ component: "fanout" });
  return new HeardFanout({
    bus: natsHeardBus(nats.nc, log),
    // Regional mode: a region's replicas share heartbeats among themselves, never across the WAN.
    subjectRoot: config.region === undefined ? subjects.replicaHeard : `${subjects.replicaHeard}.${config.region}`,
    replica: replicaName,
    periodMs: config.fanoutPeriodMs,
    log,
    // On this replica's clock, as every deadline: a peer's entry carries no time.
    onHeard: (agentType, instanceId, activeTasks) => void view.heard(agentType, instanceId, clock.now(), activeTasks),
    onBatchesLost: (n) => metrics.heardBatchesLost.inc(n),
  });
}

type RegistrarParts = {
  store: Stores["store"];
  checker: SchemaChecks;
  evictor: Evictor;
  lease: EvictorLease;
  feed: ViewFeed;
  fanout: HeardFanout | null;
  catchUp: () => Promise<void>;
  trustGate: TrustGate;
};

function buildRegistrar({ config, clock, metrics, view, root, subjects }: StartContext, p: RegistrarParts): Registrar {
  const { fanout, lease } = p;
  return new Registrar({
    store: p.store,
    view,
    checker: p.checker,
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
    settings: { ...config, ...byteBudgetsOf(config), heartbeatSubject: subjects.heartbeat },
    onConflict: () => metrics.storeConflicts.inc(),
    onStatusHeld: () => metrics.statusChangesHeld.inc(),
    onUnavailable: () => p.evictor.storeUnavailable(clock.now()),
    catchUp: p.catchUp,
    viewAt: async (revision) => (await p.feed.waitForRevision(revision, VIEW_AT_MS)) === "reached",
    specBudget: config.typeSpecCheckMs > 0 ? new TypeBudgets(config.typeSpecCheckMs, 20 * config.typeSpecCheckMs) : undefined,
    log: root.child({ component: "registrar" }),
    trust: p.trustGate,
  });
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
