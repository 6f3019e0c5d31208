/**
 * The composition root: `createRegistry` builds the parts and binds nothing; `start()` runs the
 * start steps (start/steps.ts, start/ui.ts) in order, each registering its own close on a teardown stack;
 * `stop()` aborts a start still under way and runs the stack, last in first out. The service's
 * lifecycle is data: `state` and `stopped`.
 */
import { hostname } from "node:os";
import { Registry as MetricsRegistry } from "prom-client";
import type { Config } from "./config/service.js";
import { redactedConfig } from "./config/service.js";
import { RegistryView } from "./domain/view/view.js";
import { subjects as makeSubjects } from "./protocol/subjects.js";
import { missingNodeFlags } from "./node-flags.js";
import { createMetrics, type RegistryMetrics } from "./adapters/http/metrics.js";
import { createOpsServer, type HealthReport } from "./kit/ops-server.js";
import { systemClock, type Clock } from "./service/clock.js";
import type { Logger } from "./kit/logger.js";
import { redactUrls } from "./kit/log-redaction.js";
import { createLogger as createProcessLogger } from "./kit/create-logger.js";
import { packageVersion } from "./version.js";
import { TeardownStack } from "./teardown-stack.js";
import * as steps from "./start/steps.js";
import { serveUi } from "./start/ui.js";
import { storeNames } from "./config/region.js";
import type { RemoteRegionState, RemoteRegions } from "./service/view/remote-regions.js";

export const RegistryState = { Created: "created", Starting: "starting", Running: "running", Stopping: "stopping", Stopped: "stopped" } as const;
export type RegistryState = (typeof RegistryState)[keyof typeof RegistryState];

/**
 * What an embedder may read of the view: the queries, not the methods that apply store entries.
 * The view follows the store; one written from outside would answer what the store never said.
 */
export type ViewReader = Pick<RegistryView, "get" | "all" | "instance" | "providersOf" | "consumersOf" | "capabilityNames" | "tombstones" | "revision">;

export type RegistryDeps = { config: Config; logger?: Logger; clock?: Clock; metricsRegistry?: MetricsRegistry };

export type AgentRegistry = {
  readonly state: RegistryState;
  /** Resolves when the service has stopped (by stop() or a fatal error). */
  readonly stopped: Promise<void>;
  /** The registry's view, to read: the store alone changes it (see ViewReader). */
  readonly view: ViewReader;
  readonly metrics: RegistryMetrics;
  /** The bound ops HTTP port once started. */
  readonly httpPort: number | undefined;
  /** The NATS URL in use (the embedded server's when one was started). */
  readonly natsUrl: string | undefined;
  readonly isEvictor: boolean;
  readonly replicaName: string;
  /** Regional mode: the other regions as this replica follows them (read-only views, stale marks); empty otherwise. */
  readonly remoteRegions: readonly RemoteRegionState[];
  health(): HealthReport;
  start(): Promise<void>;
  stop(reason?: string): Promise<void>;
};

/** The service's root logger, JSON lines on stdout (part of the package's API for embedders). */
export function createLogger(level: Config["logLevel"]): Logger {
  return createProcessLogger({ level, base: { service: "agent-registry" } });
}

export function createRegistry(deps: RegistryDeps): AgentRegistry {
  const { config } = deps;
  const { replicaName, root, log, metrics, clock, view, teardown } = registryParts(deps);
  const abort = new AbortController();
  const status: steps.RuntimeStatus = { nc: null, natsUrl: undefined, natsUp: false, storesOpen: false, endpointsUp: false, viewLoaded: () => false };
  let lease: steps.UseCases["lease"] | null = null;
  let remote: RemoteRegions | null = null;

  let state: RegistryState = RegistryState.Created;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let starting: Promise<void> | null = null;

  const health = (): HealthReport => healthReport(config, view, status, state);

  const ctx = startContext({ config, clock, replicaName, root, log, metrics, view, teardown, signal: abort.signal, status, health }, (reason, err) => {
    if (state === RegistryState.Stopping || state === RegistryState.Stopped) return;
    log.error({ err }, `${reason}; stopping`);
    void stop(reason);
  });

  async function start(): Promise<void> {
    if (state !== RegistryState.Created) throw new Error(`cannot start a registry that is ${state}`);
    state = RegistryState.Starting;
    log.info({ config: redactedConfig(config), version: ctx.version }, "starting");
    warnOfMissingNodeFlags(log);
    starting = runSteps(ctx, {
      useCases: (useCases) => {
        lease = useCases.lease;
        status.viewLoaded = () => useCases.feed.loaded;
      },
      regions: (regions) => (remote = regions),
    });
    try {
      await starting;
    } catch (e) {
      if (abort.signal.aborted) throw new Error(`start aborted: the registry was stopped (${String(abort.signal.reason)})`, { cause: e });
      log.error({ err: e }, "start failed");
      await stop("start failed");
      throw e;
    }
    if (state !== RegistryState.Starting) return; // stopped as the last step finished
    state = RegistryState.Running;
    log.info({ http_port: ctx.ops.port, nats: status.natsUrl === undefined ? undefined : redactUrls(status.natsUrl) }, "agent registry running");
  }

  async function stop(reason = "requested"): Promise<void> {
    if (state === RegistryState.Stopping || state === RegistryState.Stopped) return stopped;
    const wasStarting = state === RegistryState.Starting;
    state = RegistryState.Stopping;
    log.info({ reason }, "stopping");
    abort.abort(reason);
    // A start still under way gives up at its next wait; its steps' closes are on the stack by then.
    if (wasStarting && starting) await starting.catch(() => undefined);
    await teardown.run();
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
      return ctx.ops.port;
    },
    get natsUrl() {
      return status.natsUrl;
    },
    get isEvictor() {
      return lease?.isLeader ?? false;
    },
    get remoteRegions() {
      return remote?.regions ?? [];
    },
    replicaName,
    health,
    start,
    stop,
  };
}

/** What a registry is made of before it starts: its name, loggers, metrics, clock, view and teardown stack. */
function registryParts(deps: RegistryDeps) {
  const { config } = deps;
  const replicaName = config.replicaName ?? `${hostname()}-${process.pid}`;
  const root = (deps.logger ?? createLogger(config.logLevel)).child({ replica: replicaName });
  const log = root.child({ component: "main" });
  const metrics = createMetrics(deps.metricsRegistry ?? new MetricsRegistry());
  const clock = deps.clock ?? systemClock;
  // The view stamps what it applies with the clock the evictor compares with (liveness.ts).
  const view = new RegistryView(clock);
  return { replicaName, root, log, metrics, clock, view, teardown: new TeardownStack(log) };
}

/** The start, as a list of steps; each later one takes what the earlier ones opened. */
async function runSteps(ctx: steps.StartContext, opened: { useCases: (u: steps.UseCases) => void; regions: (r: RemoteRegions | null) => void }): Promise<void> {
  const { view, clock } = ctx;
  const registryFile = await steps.readRegistryFile(ctx);
  const trust = await steps.readTrustRoots(ctx);
  const cardSigner = await steps.readCardSigner(ctx);
  const schemas = steps.startSchemaChecks(ctx);
  const payloads = steps.startPayloadChecks(ctx);
  await steps.listenOps(ctx);
  const nats = await steps.connectNats(ctx);
  const stores = await steps.openStores(ctx, nats);
  const leaseStore = await steps.openLeaseStore(ctx, nats);
  const publisher = steps.startPublisher(ctx, nats, stores);
  const useCases = steps.buildUseCases(ctx, nats, stores, leaseStore, publisher, schemas.checker, payloads, trust.roots, cardSigner);
  opened.useCases(useCases);
  await steps.loadView(ctx, useCases);
  const remote = (useCases.regional.current = await steps.followRegions(ctx, nats));
  opened.regions(remote);
  steps.serveAgentDocuments(ctx, useCases, cardSigner);
  serveUi(ctx, nats, (revision, ms) => useCases.feed.waitForRevision(revision, ms), { agents: () => view.all(), now: () => clock.now(), evictorHolder: () => useCases.lease.holder, revision: () => view.revision }, remote);
  await steps.awaitSchemaWorkers(ctx, schemas);
  await steps.startFanout(ctx, useCases);
  await steps.applyRegistryFile(ctx, useCases, registryFile);
  await steps.watchTrustRoots(ctx, useCases, trust.urls);
  await steps.openEndpoints(ctx, nats, useCases, publisher);
  await steps.serveMcp(ctx, nats);
  await steps.serveAudit(ctx, nats);
  await steps.serve(ctx, nats, useCases, stores);
}

/** `/healthz` and `/readyz`: alive until stopped; ready once running with NATS, the stores, the view and the endpoints up. */
function healthReport(config: Config, view: RegistryView, status: steps.RuntimeStatus, state: RegistryState): HealthReport {
  const connected = status.nc !== null && !status.nc.isClosed() && state !== RegistryState.Stopped;
  const checks = {
    nats: { ok: connected && status.natsUp, detail: status.natsUp ? (status.natsUrl ?? "") : "not connected" },
    store: { ok: status.storesOpen, detail: status.storesOpen ? `bucket ${storeNames(config).bucket}, stream ${storeNames(config).eventsStream}` : status.storesWaiting ? `waiting: ${status.storesWaiting}` : "not opened" },
    view: { ok: status.viewLoaded(), detail: `revision ${view.revision}` },
    endpoints: { ok: status.endpointsUp, detail: status.endpointsUp ? "serving" : "not started" },
  };
  const ready = state === RegistryState.Running && Object.values(checks).every((c) => c.ok);
  return { live: state !== RegistryState.Stopped, ready, checks };
}

/** What every start step is given (start/context.ts): the settings, the shared parts, and the ops server. */
function startContext(
  parts: Pick<steps.StartContext, "config" | "clock" | "replicaName" | "root" | "log" | "metrics" | "view" | "teardown" | "signal" | "status"> & { health: () => HealthReport },
  fatal: steps.StartContext["fatal"],
): steps.StartContext {
  const { config, metrics, root, health, ...rest } = parts;
  return {
    ...rest,
    config,
    root,
    metrics,
    version: packageVersion(),
    subjects: makeSubjects(config.prefix),
    ops: createOpsServer({ host: config.httpHost, port: config.httpPort, allowedHosts: config.httpAllowedHosts, registry: metrics.registry, health, logger: root.child({ component: "ops" }) }),
    fatal,
  };
}

function warnOfMissingNodeFlags(log: Logger): void {
  const missing = missingNodeFlags();
  if (missing.length > 0) {
    log.warn({ missing }, "node was started without the registry's V8 flags (npm start and the image pass them): lookups at high rates can cost twice the CPU, and a large fleet's heap can take a third more memory (docs/operations.md)");
  }
}
