/**
 * The composition root: `createRegistry` builds every part and binds nothing; `start()`
 * connects, loads the view, opens the API and joins the evictor election; `stop()` tears it
 * all down in reverse order. The service's lifecycle is data: `state` and `stopped`.
 */
import { hostname } from "node:os";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect as natsConnect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import type { Service } from "@nats-io/services";
import { Registry as MetricsRegistry } from "prom-client";
import { pino } from "pino";
import type { Config } from "./config.js";
import { redactedConfig } from "./config.js";
import { RegistryView } from "./domain/view.js";
import { SchemaChecker } from "./domain/schema-check.js";
import { TypeBudgets } from "./domain/rate-limit.js";
import { toCloudEvent, type StoreEvent } from "./domain/events.js";
import { KvStore, openBucket } from "./adapters/nats/kv-store.js";
import { EventStream } from "./adapters/nats/event-stream.js";
import { startEndpoints } from "./adapters/nats/endpoints.js";
import { checkServer, registryConnectionOptions, resolveServer } from "./adapters/nats/nats-connection.js";
import type { NatsServerHandle } from "./adapters/nats/nats-server-process.js";
import { subjects as makeSubjects } from "./adapters/nats/subjects.js";
import { missingNodeFlags } from "./node-flags.js";
import { createMetrics, requestObserver, setBuildInfo, type RegistryMetrics } from "./adapters/http/metrics.js";
import { createOpsServer, type HealthReport, type OpsServer } from "./adapters/http/ops-server.js";
import { ViewFeed } from "./service/view-feed.js";
import { Registrar } from "./service/registrar.js";
import { QueryService } from "./service/queries.js";
import { EventPublisher } from "./service/event-publisher.js";
import { EvictorLease } from "./service/evictor-lease.js";
import { Evictor } from "./service/evictor.js";
import { systemClock, type Clock } from "./service/clock.js";
import type { Logger } from "./service/logger.js";
import { FleetGauges } from "./service/fleet-gauges.js";
import { packageVersion } from "./version.js";
import { monitorConnection } from "./adapters/nats/connection-monitor.js";
import { StaticRegistry, parseRegistryFile } from "./service/static-registry.js";
import { readText, watchFile, type WatchedFile } from "./adapters/file/watched-file.js";

export const RegistryState = { Created: "created", Starting: "starting", Running: "running", Stopping: "stopping", Stopped: "stopped" } as const;
export type RegistryState = (typeof RegistryState)[keyof typeof RegistryState];

export type RegistryDeps = { config: Config; logger?: Logger; clock?: Clock; metricsRegistry?: MetricsRegistry };

export type AgentRegistry = {
  readonly state: RegistryState;
  /** Resolves when the service has stopped (by stop() or a fatal error). */
  readonly stopped: Promise<void>;
  readonly view: RegistryView;
  readonly metrics: RegistryMetrics;
  /** The bound ops HTTP port once started. */
  readonly httpPort: number | undefined;
  /** The NATS URL in use (the embedded server's when one was started). */
  readonly natsUrl: string | undefined;
  readonly isEvictor: boolean;
  readonly replicaName: string;
  health(): HealthReport;
  start(): Promise<void>;
  stop(reason?: string): Promise<void>;
};

export function createLogger(level: Config["logLevel"]): Logger {
  return pino({ level, base: { service: "agent-registry" }, redact: ["password", "token", "*.password", "*.token"] }) as unknown as Logger;
}

export function createRegistry(deps: RegistryDeps): AgentRegistry {
  const { config } = deps;
  const clock = deps.clock ?? systemClock;
  const replicaName = config.replicaName ?? `${hostname()}-${process.pid}`;
  const root = (deps.logger ?? createLogger(config.logLevel)).child({ replica: replicaName });
  const metrics = createMetrics(deps.metricsRegistry ?? new MetricsRegistry());
  const version = packageVersion();
  const subj = makeSubjects(config.prefix);
  const view = new RegistryView();
  const checker = new SchemaChecker();

  let state: RegistryState = RegistryState.Created;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let nc: NatsConnection | null = null;
  let embedded: NatsServerHandle | null = null;
  let service: Service | null = null;
  let feed: ViewFeed | null = null;
  let lease: EvictorLease | null = null;
  let evictor: Evictor | null = null;
  let publisher: EventPublisher | null = null;
  let gauges: FleetGauges | null = null;
  let fileWatch: WatchedFile | null = null;
  let natsUrl: string | undefined;
  let storesOpen = false;
  let endpointsUp = false;

  const health = (): HealthReport => {
    const connected = nc !== null && !nc.isClosed() && state !== RegistryState.Stopped;
    const checks = {
      nats: { ok: connected && natsUp, detail: natsUp ? (natsUrl ?? "") : "not connected" },
      store: { ok: storesOpen, detail: storesOpen ? `bucket ${config.bucket}, stream ${config.eventsStream}` : "not opened" },
      view: { ok: feed?.loaded ?? false, detail: `revision ${view.revision}` },
      endpoints: { ok: endpointsUp, detail: endpointsUp ? "serving" : "not started" },
    };
    const ready = state === RegistryState.Running && Object.values(checks).every((c) => c.ok);
    return { live: state !== RegistryState.Stopped, ready, checks };
  };
  let natsUp = false;

  const ops: OpsServer = createOpsServer({
    host: config.httpHost,
    port: config.httpPort,
    registry: metrics.registry,
    health,
    logger: root.child({ component: "ops" }),
  });

  async function start(): Promise<void> {
    if (state !== RegistryState.Created) throw new Error(`cannot start a registry that is ${state}`);
    state = RegistryState.Starting;
    const log = root.child({ component: "main" });
    log.info({ config: redactedConfig(config), version }, "starting");
    const missingFlags = missingNodeFlags();
    if (missingFlags.length > 0) {
      log.warn({ missing: missingFlags }, "node was started without the registry's V8 flags (npm start and the image pass them): lookups at high rates can cost twice the CPU, and a large fleet's heap can take a third more memory (docs/operations.md)");
    }
    try {
      await ops.listen();
      const resolved = await resolveServer(config, log);
      embedded = resolved.embedded;
      natsUrl = resolved.servers;
      nc = await natsConnect(registryConnectionOptions(config, resolved.servers, `agent-registry:${replicaName}`));
      monitorConnection(nc, metrics, log, {
        onUp: (up) => {
          natsUp = up;
          if (!up) evictor?.disconnected();
        },
        onReconnect: () => {
          evictor?.reconnected(clock.now());
          feed?.restart("reconnected");
        },
        onClosed: (err) => {
          if (state !== RegistryState.Running) return;
          log.error({ err }, "NATS connection closed for good; stopping");
          void stop("nats connection closed");
        },
      });
      const server = checkServer(nc);
      setBuildInfo(metrics, version, server.version);
      log.info({ server: server.version, clustered: server.clustered }, "connected to NATS");
      for (const w of server.warnings) log.warn(w);

      const js = jetstream(nc, { timeout: config.requestTimeoutMs });
      const bucket = await openBucket(js, { bucket: config.bucket, replicas: config.replicas, history: config.history, timeoutMs: config.requestTimeoutMs });
      if (bucket.check.created) log.info({ bucket: config.bucket }, "created the KV bucket");
      for (const m of bucket.check.mismatches) log.warn({ bucket: config.bucket }, `bucket settings differ: ${m}`);
      const events = await EventStream.open(nc, subj, { name: config.eventsStream, replicas: config.replicas, maxAgeMs: config.eventsMaxAgeMs, timeoutMs: config.requestTimeoutMs });
      if (events.created) log.info({ stream: config.eventsStream }, "created the events stream");
      for (const m of events.mismatches) log.warn({ stream: config.eventsStream }, `stream settings differ: ${m}`);
      storesOpen = true;
      const store = new KvStore(bucket.kv, { nc, bucket: config.bucket, timeoutMs: config.requestTimeoutMs });

      publisher = new EventPublisher({
        sink: events.stream,
        subjectOf: (e: StoreEvent) => subj.event(e.type, e.subject),
        log: root.child({ component: "events" }),
        now: () => clock.now(),
        hooks: { onPublished: () => metrics.eventsPublished.inc(), onFailure: () => metrics.eventPublishFailures.inc() },
      });
      publisher.start();
      const registrar = new Registrar({
        store,
        view,
        checker,
        clock,
        settings: { ...config, heartbeatSubject: subj.heartbeat },
        onConflict: () => metrics.storeConflicts.inc(),
        onUnavailable: () => evictor?.storeUnavailable(clock.now()),
        // Best effort: if the store is away, the retry's own read says so.
        catchUp: () =>
          store
            .lastRevision()
            .then((rev) => feed!.waitForRevision(rev, 1000))
            .then(
              () => undefined,
              () => undefined,
            ),
        specBudget: config.typeSpecCheckMs > 0 ? new TypeBudgets(config.typeSpecCheckMs, 20 * config.typeSpecCheckMs) : undefined,
      });
      const queries = new QueryService(view, (rev, ms) => feed!.waitForRevision(rev, ms));
      evictor = new Evictor({
        store,
        view,
        clock,
        log: root.child({ component: "evictor" }),
        policy: { missedHeartbeats: config.missedHeartbeats, selfPreservationRatio: config.selfPreservationRatio },
        tickMs: config.evictionTickMs,
        retentionMs: config.retentionMs,
        hooks: {
          onEvicted: () => metrics.evictions.inc(),
          onSelfPreservation: (active, detail) => {
            metrics.selfPreservationActive.set(active ? 1 : 0);
            const alert = toCloudEvent("registry.alert.self_preservation", `alert-${replicaName}-${clock.now()}`, "self_preservation", { active, ...detail, threshold: config.selfPreservationRatio }, clock.now());
            events.stream.publish(`${config.prefix}.alert.self_preservation`, alert, null).catch((err: unknown) => log.warn({ err }, "could not publish the self-preservation alert"));
          },
        },
      });
      lease = new EvictorLease({
        store,
        clock,
        log: root.child({ component: "lease" }),
        holder: replicaName,
        leaseMs: config.leaseMs,
        listener: {
          onAcquired: (since) => {
            metrics.evictorLeader.set(1);
            evictor!.start(since);
            void publisher!.becomeLeader();
          },
          onLost: () => {
            metrics.evictorLeader.set(0);
            evictor!.stop();
            publisher!.stepDown();
          },
        },
      });
      feed = new ViewFeed({
        store,
        view,
        log: root.child({ component: "view" }),
        onEvents: (evs) => {
          for (const e of evs) if (e.type === "registry.agent.deregistered") metrics.deregistrations.inc({ reason: e.data.reason });
          publisher!.enqueue(evs);
        },
        onReserved: (entry) => lease!.observe(entry),
        onRestart: () => metrics.watchRestarts.inc(),
        onLag: (lag) => {
          metrics.viewLag.set(lag);
          metrics.viewRevision.set(view.revision);
        },
      });
      await feed.start();
      await feed.whenLoaded();
      metrics.viewRevision.set(view.revision);
      log.info({ revision: view.revision, agents: view.size }, "view loaded");

      service = await startEndpoints({
        nc,
        prefix: config.prefix,
        version,
        limits: { maxBytes: config.maxPayloadBytes, maxDepth: config.maxDepth },
        typeRateLimit: config.typeRateLimit > 0 ? new TypeBudgets(config.typeRateLimit, Math.max(1, 2 * config.typeRateLimit)) : undefined,
        registrar,
        queries,
        log: root.child({ component: "api" }),
        observe: requestObserver(metrics),
        onHeartbeat: config.heartbeatEvents
          ? (agentType, instanceId, status, activeTasks) => {
              const ev = toCloudEvent("registry.agent.heartbeat", `hb-${agentType}-${instanceId}-${clock.now()}`, agentType, { agent_type: agentType, instance_id: instanceId, status, active_tasks: activeTasks ?? null }, clock.now());
              nc!.publish(subj.event("registry.agent.heartbeat", agentType), JSON.stringify(ev));
            }
          : undefined,
      });
      if (config.registryFile) {
        const path = config.registryFile;
        const statics = new StaticRegistry({ registrar, view, log: root.child({ component: "registry-file" }), onError: () => metrics.registryFileErrors.inc() });
        // A broken file at start stops the start, with the file's own message.
        const text = await readText(path);
        const applied = await statics.apply(parseRegistryFile(path, text));
        log.info({ path, agents: applied.registered.length }, "registry file loaded");
        fileWatch = watchFile(path, (t, err) => void statics.reload(path, t, err), { initial: text });
      }
      // Ready means a request sent now is answered: the server must have our subscriptions.
      await nc.flush();
      endpointsUp = true;
      lease.start();
      gauges = new FleetGauges(view, metrics);
      gauges.start();
      state = RegistryState.Running;
      log.info({ http_port: ops.port, nats: natsUrl }, "agent registry running");
    } catch (e) {
      log.error({ err: e }, "start failed");
      await stop("start failed");
      throw e;
    }
  }

  async function stop(reason = "requested"): Promise<void> {
    if (state === RegistryState.Stopping || state === RegistryState.Stopped) return stopped;
    state = RegistryState.Stopping;
    const log = root.child({ component: "main" });
    log.info({ reason }, "stopping");
    const quietly = async (what: string, op: () => Promise<unknown> | unknown): Promise<void> => {
      try {
        await op();
      } catch (err) {
        log.warn({ err }, `${what} failed during shutdown`);
      }
    };
    gauges?.stop();
    fileWatch?.close();
    await quietly("stopping the evictor", () => evictor?.stop());
    await quietly("releasing the lease", () => lease?.release());
    await quietly("stopping the endpoints", () => service?.stop());
    endpointsUp = false;
    await quietly("flushing events", () => withDeadline(publisher?.flush(), 3000));
    await quietly("stopping the publisher", () => publisher?.stop());
    await quietly("stopping the view feed", () => feed?.stop());
    await quietly("draining NATS", () => (nc && !nc.isClosed() ? nc.drain() : undefined));
    await quietly("stopping the embedded nats-server", () => embedded?.stop());
    await quietly("closing the ops server", () => ops.close());
    state = RegistryState.Stopped;
    log.info("stopped");
    resolveStopped();
  }

  return {
    get state() {
      return state;
    },
    stopped,
    view,
    metrics,
    get httpPort() {
      return ops.port;
    },
    get natsUrl() {
      return natsUrl;
    },
    get isEvictor() {
      return lease?.isLeader ?? false;
    },
    replicaName,
    health,
    start,
    stop,
  };
}

function withDeadline(p: Promise<unknown> | undefined, ms: number): Promise<unknown> {
  if (!p) return Promise.resolve();
  return Promise.race([p, new Promise((r) => setTimeout(r, ms).unref())]);
}
