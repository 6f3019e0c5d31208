/**
 * What every start step shares: the context createRegistry builds, the parts steps hand each
 * other, and the two waits they use.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { Registry as MetricsRegistry } from "prom-client";
import type { Config } from "../config/service.js";
import type { RegistryView } from "../domain/view/view.js";
import type { Subjects } from "../protocol/subjects.js";
import type { KvStore } from "../adapters/nats/kv-store.js";
import type { EventStream } from "../adapters/nats/event-stream.js";
import { type RegistryMetrics } from "../adapters/http/metrics.js";
import type { OpsServer } from "../kit/ops-server.js";
import type { ViewFeed } from "../service/view/view-feed.js";
import type { Registrar } from "../service/registration/registrar.js";
import type { SchemaRegistrar } from "../service/registration/schema-registrar.js";
import type { QueryService } from "../service/queries/queries.js";
import type { Approvals } from "../service/registration/approvals.js";
import type { Deprecations } from "../service/registration/deprecations.js";
import type { TrustGate } from "../service/registration/trust-gate.js";
import type { BucketTrustOps } from "../service/registration/bucket-trust-ops.js";
import type { TrustRejudge } from "../service/registration/trust-rejudge.js";
import type { EvictorLease } from "../service/liveness/evictor-lease.js";
import type { Evictor } from "../service/liveness/evictor.js";
import { type FileWarnings } from "../service/registration/static-registry.js";
import type { Clock } from "../service/clock.js";
import type { Logger } from "../kit/logger.js";
import type { TeardownStack } from "../teardown-stack.js";
import type { HeardFanout } from "../service/liveness/heard-fanout.js";
import type { RemoteRegions } from "../service/view/remote-regions.js";

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
  /** v1.2: the approval gate's operator ops (docs/trust.md). */
  approvals: Approvals;
  /** v1.2: deprecation of agent types, an operator op (docs/trust.md, "Deprecation"). */
  deprecations: Deprecations;
  evictor: Evictor;
  lease: EvictorLease;
  fileWarnings: FileWarnings;
  /** v1.2: the operator's ops on the tenants' trust roots in the bucket (docs/trust.md). */
  bucketTrust: BucketTrustOps;
  /** v1.2: the trust roots in force for registration, and the re-judgement of stored specs when they change (docs/trust.md). */
  trust: { gate: TrustGate; rejudge: TrustRejudge };
  /** REGISTRY_LIVENESS=memory: tells the other replicas which heartbeats this one answered from memory. */
  fanout: HeardFanout | null;
  /** Regional mode: the other regions, once followRegions has started following them. */
  regional: { current: RemoteRegions | null };
};


/** Resolves with `p`, or rejects with the abort reason as soon as `signal` aborts. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Resolves with `p`, or after `ms`, whichever comes first: a close that must not hold up a stop. */
export function withDeadline(p: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([p, new Promise((r) => setTimeout(r, ms).unref())]);
}
