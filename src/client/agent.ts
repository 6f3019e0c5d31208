/**
 * The agent side of liveness (PROTOCOL.md sections 2 and 4): register, heartbeat on the
 * interval the registry returns, register again when the registry forgot us (eviction during
 * a partition) or the connection came back, deregister on close. A registry outage must never
 * crash an agent, so transient failures are retried and reported as events, never thrown.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { UnknownInstanceError, isTransient } from "./errors.js";
import { RegistryClient } from "./registry-client.js";
import type { AgentSpecInput, CardRegistration, DeregisterReply, InstanceStatus, RegisterReply, RegisterRequest, RegistrationSource, ServerJsonRegistration, ToolspecRegistration } from "./types.js";

export type AgentEvent =
  | { type: "registered"; reply: RegisterReply }
  | { type: "reregistered"; reply: RegisterReply; reason: "unknown_instance" | "reconnect" }
  | { type: "heartbeat_failed"; error: unknown; consecutive: number }
  | { type: "deregistered"; reply: DeregisterReply | undefined }
  | { type: "error"; error: unknown; phase: "register" | "reregister" | "deregister"; retryInMs?: number };
export type AgentEventType = AgentEvent["type"];
type Listener<T extends AgentEventType> = (event: Extract<AgentEvent, { type: T }>) => void;

export type RegisterAgentOptions = {
  /** Stable id of this replica; the registry generates one when absent. */
  instanceId?: string;
  /** Requested interval; the registry bounds it and the reply's value is the one used. */
  heartbeatIntervalMs?: number;
  /** `registered` keeps the agent out of routing until `setStatus("ready")`. Default `ready`. */
  status?: "registered" | "ready";
  metadata?: Record<string, string>;
  /**
   * Overwrite a different spec the registry holds under the same version (PROTOCOL.md section
   * 9) instead of being refused with ConflictError. Sent with every registration of this
   * handle, re-registrations too: the handle's spec is the one meant to be stored.
   */
  replace?: boolean;
  prefix?: string;
  /**
   * The tenant the agent belongs to: it registers, heartbeats and deregisters on
   * `registry.tenant.<tenant>.…` (v1.2), the subjects a tenant's NATS users are allowed, and is
   * stored with that `tenant_scope`. Default: the spec's `tenant_scope` (or the one beside a
   * card or tool spec); none for a shared agent.
   */
  tenant?: string;
  /** Request timeout in ms (default 5000). */
  timeoutMs?: number;
  /** Retry delays while the registry is unavailable: doubled each time, 50-100 % jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  onEvent?: (event: AgentEvent) => void;
  /** Gives up waiting for the first registration (rejects with the signal's reason). */
  signal?: AbortSignal;
};

export type AgentHandle = {
  readonly agentType: string;
  readonly instanceId: string;
  readonly status: InstanceStatus;
  readonly activeTasks: number;
  /** The latest register reply (interval, eviction window, warnings). */
  readonly registration: RegisterReply;
  /** Changes the status and sends a heartbeat now; resolves once it was sent (or failed). */
  setStatus(status: InstanceStatus): Promise<void>;
  /** Reported with the next heartbeat (drives discover's `busy`). */
  setActiveTasks(n: number): void;
  /** `setStatus("draining")`: routes and lookups stop choosing this instance. */
  drain(): Promise<void>;
  /** Stops heartbeats and deregisters. Never rejects; failures are `error` events. */
  close(reason?: string): Promise<void>;
  /** Resolves when the handle is closed (by close() or because the connection closed). */
  readonly closed: Promise<void>;
  on<T extends AgentEventType>(type: T, listener: Listener<T>): () => void;
};

/**
 * Registers an agent and keeps the instance alive. `what` is its AgentSpec, or the A2A Agent
 * Card (`{ agent_type, a2a_card, ... }`), MCP tool spec (`{ agent_type, mcp_toolspec,
 * description, version, ... }`) or MCP Registry server.json (`{ agent_type, mcp_server, ... }`)
 * it already publishes (PROTOCOL.md section 10; docs/protocol.md section 8). Resolves once
 * registered; retries for as long as the registry is unreachable or unavailable; rejects only
 * on a 4xx reply (invalid_spec, invalid_card, conflict, ...) or when `signal` aborts.
 */
export async function registerAgent(
  nc: NatsConnection,
  what: AgentSpecInput | CardRegistration | ToolspecRegistration | ServerJsonRegistration,
  options: RegisterAgentOptions = {},
): Promise<AgentHandle> {
  // An AgentSpec always has capabilities; a card or tool spec registration never does (a spec
  // may carry an a2a_card of its own, so that key cannot tell them apart).
  const source: RegistrationSource = "capabilities" in what ? { spec: what } : what;
  const session = new AgentSession(nc, source, options);
  await session.registerFirst();
  session.start();
  return session;
}

/** The tenant a registration names itself, if any: the spec's `tenant_scope`, or the one beside a card or tool spec. */
function tenantOf(source: RegistrationSource): string | undefined {
  const scope = "spec" in source ? source.spec.tenant_scope : source.tenant_scope;
  return typeof scope === "string" ? scope : undefined;
}

/** Heartbeat period with ±10 % jitter, so a fleet started together does not beat in step. */
const jittered = (ms: number) => Math.max(1, Math.round(ms * (0.9 + Math.random() * 0.2)));

class AgentSession implements AgentHandle {
  readonly #nc: NatsConnection;
  readonly #client: RegistryClient;
  readonly #source: RegistrationSource;
  readonly #opts: RegisterAgentOptions;
  readonly #listeners = new Map<AgentEventType, Set<(e: AgentEvent) => void>>();
  #reply!: RegisterReply;
  #instanceId: string | undefined;
  #status: InstanceStatus;
  #activeTasks = 0;
  #failures = 0;
  #stopping = false;
  #closing: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #beatNow = false;
  #beatWaiters: (() => void)[] = [];
  #reregister: "unknown_instance" | "reconnect" | undefined;
  #loop: Promise<void> = Promise.resolve();
  #statusIter: { stop?: () => void } | undefined;
  readonly closed: Promise<void>;
  #resolveClosed!: () => void;

  constructor(nc: NatsConnection, source: RegistrationSource, opts: RegisterAgentOptions) {
    this.#nc = nc;
    this.#source = source;
    this.#opts = opts;
    const tenant = opts.tenant ?? tenantOf(source);
    this.#client = new RegistryClient(nc, { prefix: opts.prefix, timeoutMs: opts.timeoutMs, ...(tenant !== undefined ? { tenant } : {}) });
    this.#instanceId = opts.instanceId;
    this.#status = opts.status ?? "ready";
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    if (opts.onEvent) {
      const cb = opts.onEvent;
      for (const t of ["registered", "reregistered", "heartbeat_failed", "deregistered", "error"] as const) this.on(t, cb);
    }
  }

  get agentType(): string {
    return this.#reply?.agent_type ?? ("spec" in this.#source ? this.#source.spec.agent_type : this.#source.agent_type);
  }
  get instanceId(): string {
    return this.#instanceId ?? "";
  }
  get status(): InstanceStatus {
    return this.#status;
  }
  get activeTasks(): number {
    return this.#activeTasks;
  }
  get registration(): RegisterReply {
    return this.#reply;
  }

  on<T extends AgentEventType>(type: T, listener: Listener<T>): () => void {
    const set = this.#listeners.get(type) ?? new Set();
    this.#listeners.set(type, set);
    const fn = listener as (e: AgentEvent) => void;
    set.add(fn);
    return () => set.delete(fn);
  }

  #emit(event: AgentEvent): void {
    for (const fn of this.#listeners.get(event.type) ?? []) {
      try {
        fn(event);
      } catch {
        // A faulty listener must not stop the heartbeats that keep the agent routable.
      }
    }
  }

  #backoff(attempt: number): number {
    const initial = this.#opts.backoff?.initialMs ?? 500;
    const max = this.#opts.backoff?.maxMs ?? 30_000;
    return Math.round(Math.min(max, initial * 2 ** Math.min(attempt, 30)) * (0.5 + Math.random() / 2));
  }

  /** Sleeps until `ms` passed or something (status change, reconnect, close) wakes the loop. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.#wake === done) this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }

  #register(): Promise<RegisterReply> {
    const req: RegisterRequest = {
      ...this.#source,
      // A draining instance that must register again comes back unroutable, then beats `draining`.
      status: this.#status === "ready" ? "ready" : "registered",
    };
    if (this.#instanceId !== undefined) req.instance_id = this.#instanceId;
    if (this.#opts.heartbeatIntervalMs !== undefined) req.heartbeat_interval_ms = this.#opts.heartbeatIntervalMs;
    if (this.#opts.metadata) req.metadata = this.#opts.metadata;
    if (this.#opts.replace === true) req.replace = true;
    return this.#client.register(req);
  }

  #accept(reply: RegisterReply): void {
    this.#reply = reply;
    this.#instanceId = reply.instance_id;
    if (this.#status === "draining") this.#beatNow = true;
  }

  async registerFirst(): Promise<void> {
    const signal = this.#opts.signal;
    const onAbort = () => this.#wake?.();
    signal?.addEventListener("abort", onAbort);
    try {
      for (let attempt = 0; ; attempt++) {
        signal?.throwIfAborted();
        try {
          this.#accept(await this.#register());
          this.#emit({ type: "registered", reply: this.#reply });
          return;
        } catch (e) {
          if (!isTransient(e)) throw e;
          const wait = this.#backoff(attempt);
          this.#emit({ type: "error", error: e, phase: "register", retryInMs: wait });
          await this.#sleep(wait);
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  start(): void {
    this.#loop = this.#run();
    const iter = this.#nc.status();
    this.#statusIter = iter as { stop?: () => void };
    void (async () => {
      for await (const s of iter) {
        // After a reconnect the registry may have evicted us or lost nothing: registering
        // again with the same instance_id is idempotent, so it is always safe.
        if (s.type === "reconnect" && !this.#stopping) {
          this.#reregister ??= "reconnect";
          this.#wake?.();
        }
      }
    })().catch(() => undefined);
    void this.#nc.closed().then(() => {
      this.#stopping = true;
      this.#wake?.();
      this.#closing ??= this.#loop.then(() => this.#resolveClosed());
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      if (this.#reregister) {
        await this.#registerAgain(this.#reregister);
        continue;
      }
      if (!this.#beatNow) await this.#sleep(jittered(this.#reply.heartbeat_interval_ms));
      if (this.#stopping) break;
      if (this.#reregister) continue;
      this.#beatNow = false;
      await this.#beat();
    }
    this.#flushBeatWaiters();
  }

  #flushBeatWaiters(): void {
    const waiters = this.#beatWaiters;
    this.#beatWaiters = [];
    for (const w of waiters) w();
  }

  async #beat(): Promise<void> {
    const waiters = this.#beatWaiters;
    this.#beatWaiters = [];
    try {
      // A reply slower than the interval is useless: the next beat is already due.
      const timeoutMs = Math.min(this.#client.timeoutMs, this.#reply.heartbeat_interval_ms);
      await this.#client.heartbeat(this.agentType, this.instanceId, { status: this.#status, active_tasks: this.#activeTasks }, { timeoutMs });
      this.#failures = 0;
    } catch (e) {
      if (e instanceof UnknownInstanceError) {
        this.#reregister = "unknown_instance";
        // Whoever waits for this beat gets the next one, right after registering again.
        this.#beatWaiters.push(...waiters);
        if (waiters.length > 0) this.#beatNow = true;
        return;
      }
      this.#failures++;
      this.#emit({ type: "heartbeat_failed", error: e, consecutive: this.#failures });
    }
    for (const w of waiters) w();
  }

  async #registerAgain(reason: "unknown_instance" | "reconnect"): Promise<void> {
    for (let attempt = 0; !this.#stopping; attempt++) {
      try {
        const reply = await this.#register();
        this.#reregister = undefined;
        this.#failures = 0;
        this.#accept(reply);
        this.#emit({ type: "reregistered", reply, reason });
        return;
      } catch (e) {
        // Even a 4xx (say, another type took our nats_subject meanwhile) is retried: the agent
        // process keeps serving and the operator sees the `error` events.
        const wait = this.#backoff(attempt);
        this.#emit({ type: "error", error: e, phase: "reregister", retryInMs: wait });
        await this.#sleep(wait);
      }
    }
  }

  setStatus(status: InstanceStatus): Promise<void> {
    this.#status = status;
    if (this.#stopping) return Promise.resolve();
    const sent = new Promise<void>((resolve) => this.#beatWaiters.push(resolve));
    this.#beatNow = true;
    this.#wake?.();
    return sent;
  }

  setActiveTasks(n: number): void {
    this.#activeTasks = Math.max(0, Math.floor(n));
  }

  drain(): Promise<void> {
    return this.setStatus("draining");
  }

  close(reason?: string): Promise<void> {
    this.#closing ??= this.#shutdown(reason);
    return this.#closing;
  }

  async #shutdown(reason: string | undefined): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    this.#statusIter?.stop?.();
    // Waiting for the loop first means no heartbeat can land after the deregister.
    await this.#loop.catch(() => undefined);
    try {
      const reply = await this.#client.deregister(this.agentType, this.instanceId, reason === undefined ? {} : { reason });
      this.#emit({ type: "deregistered", reply });
    } catch (e) {
      if (e instanceof UnknownInstanceError) this.#emit({ type: "deregistered", reply: undefined });
      else this.#emit({ type: "error", error: e, phase: "deregister" });
    }
    this.#resolveClosed();
  }
}
