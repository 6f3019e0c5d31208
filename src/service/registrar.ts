/**
 * The write use cases: register, heartbeat, deregister (an instance or a whole type). Each
 * plans its writes with the pure rules of domain/registration.ts from what this replica's view
 * holds, writes with compare-and-set, and on a lost race re-reads the keys from the store and
 * plans again (the view may lag, and KV gets are not read-your-writes). Five lost races in a
 * row answer `conflict`.
 */
import { randomBytes } from "node:crypto";
import { ErrorCode, RateLimitedError, RegistryError, invalidRequest, notFound } from "../domain/errors.js";
import type { TypeBudgets } from "../domain/rate-limit.js";
import { InstanceStatus, STATIC_INSTANCE_ID, type AgentState } from "../domain/model.js";
import type { AgentSpec } from "../domain/spec.js";
import type { RegisterMessage, HeartbeatMessage } from "../domain/messages.js";
import { StoreConflictError, StoreUnavailableError, type Store } from "../domain/ports.js";
import {
  agentKey,
  decodeAgentRecord,
  decodeInstanceRecord,
  encodeRecord,
  instanceKey,
  RemovalReason,
} from "../domain/records.js";
import { planHeartbeat, planRegister, planRemoval, type Current } from "../domain/registration.js";
import type { SchemaChecker } from "../domain/schema-check.js";
import { validateSpec } from "../domain/validation.js";
import type { RegistryView } from "../domain/view.js";
import type { Clock } from "./clock.js";

export const MAX_WRITE_ATTEMPTS = 5;

export type RegistrarSettings = {
  readonly missedHeartbeats: number;
  readonly defaultHeartbeatIntervalMs: number;
  readonly minHeartbeatIntervalMs: number;
  readonly maxHeartbeatIntervalMs: number;
  readonly duplicateCapabilities: "allow" | "reject";
  readonly heartbeatSubject: (agentType: string, instanceId: string) => string;
};

export type RegistrarDeps = {
  store: Store;
  view: RegistryView;
  checker: SchemaChecker;
  clock: Clock;
  settings: RegistrarSettings;
  /** Told of every lost compare-and-set (a metric). */
  onConflict?: () => void;
  /**
   * Milliseconds of spec validation per second per agent type (REGISTRY_TYPE_SPEC_CHECK_MS):
   * schema compilation is the costliest work a request can ask for (up to ~1 s for a 256 KiB
   * spec of distinct schemas, docs/reliability.md); unchanged specs hit the verdict cache.
   */
  specBudget?: TypeBudgets;
  /** Told when a write or read could not reach the store (a heartbeat may have been lost). */
  onUnavailable?: () => void;
  /**
   * Brings the view up to the store's current revision (bounded wait). Called before a retry:
   * the rules that span instances (a rollback keeps the newer spec while an instance of it
   * is live) read the view, and a lost race means the view was behind.
   */
  catchUp?: () => Promise<void>;
};

export type RegisterReply = {
  agent_type: string;
  version: string;
  instance_id: string;
  status: InstanceStatus;
  revision: number;
  heartbeat_subject: string;
  heartbeat_interval_ms: number;
  evict_after_ms: number;
  warnings: string[];
};

export type DeregisterReply = { agent_type: string; instance_id: string | null; agent_removed: boolean; revision: number; instances?: string[] };

export class Registrar {
  constructor(private readonly deps: RegistrarDeps) {}

  async register(agentType: string, msg: RegisterMessage, opts: { static?: boolean } = {}): Promise<RegisterReply> {
    const { settings, view } = this.deps;
    const rawSpec = msg.spec;
    if (typeof rawSpec === "object" && rawSpec !== null && "agent_type" in rawSpec && rawSpec.agent_type !== agentType) {
      throw invalidRequest(`spec.agent_type ${JSON.stringify(rawSpec.agent_type)} does not match the subject's agent_type ${agentType}`, [
        { path: "spec.agent_type", message: `must be ${agentType}` },
      ]);
    }
    const { spec, warnings } = this.validate(agentType, rawSpec, opts.static === true);
    const instanceId = opts.static ? STATIC_INSTANCE_ID : (msg.instance_id ?? newInstanceId());
    if (!opts.static && instanceId === STATIC_INSTANCE_ID) {
      throw invalidRequest(`instance_id "${STATIC_INSTANCE_ID}" is reserved for registry-file entries`);
    }
    const requested = msg.heartbeat_interval_ms ?? settings.defaultHeartbeatIntervalMs;
    const interval = Math.min(settings.maxHeartbeatIntervalMs, Math.max(settings.minHeartbeatIntervalMs, requested));
    if (interval !== requested) warnings.push(`heartbeat_interval_ms ${requested} outside ${settings.minHeartbeatIntervalMs}..${settings.maxHeartbeatIntervalMs}; using ${interval}`);
    const status = msg.status ?? InstanceStatus.Ready;

    const revision = await this.withRetries(agentType, instanceId, async (current) => {
      const otherLiveVersions: string[] = [];
      for (const i of view.get(agentType)?.instances.values() ?? []) if (i.instance_id !== instanceId) otherLiveVersions.push(i.version);
      const plan = planRegister(
        { spec, instanceId, heartbeatIntervalMs: interval, status, metadata: msg.metadata ?? {}, static: opts.static ?? false },
        current,
        { otherLiveVersions, others: this.fleetCandidates(spec), duplicateCapabilities: settings.duplicateCapabilities },
        this.deps.clock.now(),
      );
      warnings.push(...plan.notes.filter((n) => !warnings.includes(n)));
      if (plan.agentWrite) {
        await this.deps.store.write(agentKey(agentType), encodeRecord(plan.agentWrite.record), plan.agentWrite.expectedRevision);
      }
      return this.deps.store.write(instanceKey(agentType, instanceId), encodeRecord(plan.instanceWrite.record), plan.instanceWrite.expectedRevision);
    });
    return {
      agent_type: agentType,
      version: spec.version,
      instance_id: instanceId,
      status,
      revision,
      heartbeat_subject: settings.heartbeatSubject(agentType, instanceId),
      heartbeat_interval_ms: interval,
      evict_after_ms: interval * settings.missedHeartbeats,
      warnings,
    };
  }

  async heartbeat(agentType: string, instanceId: string, msg: HeartbeatMessage): Promise<{ status: InstanceStatus; revision: number }> {
    let status: InstanceStatus = InstanceStatus.Ready;
    const revision = await this.withRetries(agentType, instanceId, async (current) => {
      const plan = planHeartbeat(agentType, instanceId, current.instance, { status: msg.status, activeTasks: msg.active_tasks }, this.deps.clock.now());
      status = plan.record.status;
      return this.deps.store.write(instanceKey(agentType, instanceId), encodeRecord(plan.record), plan.expectedRevision);
    });
    return { status, revision };
  }

  async deregisterInstance(agentType: string, instanceId: string, reason: RemovalReason = RemovalReason.Graceful): Promise<DeregisterReply> {
    const revision = await this.withRetries(agentType, instanceId, async (current) => {
      const plan = planRemoval(agentType, instanceId, current.instance, reason, this.deps.clock.now());
      return this.deps.store.write(instanceKey(agentType, instanceId), encodeRecord(plan.record), plan.expectedRevision);
    });
    return { agent_type: agentType, instance_id: instanceId, agent_removed: this.liveOthers(agentType, instanceId) === 0, revision };
  }

  /** Operator action: every live instance of the type leaves with reason `operator`. */
  async deregisterType(agentType: string): Promise<DeregisterReply> {
    const agent = this.deps.view.get(agentType);
    if (!agent) throw notFound(`agent type ${agentType} is not registered`);
    let revision = this.deps.view.revision;
    const removed: string[] = [];
    for (const instanceId of [...agent.instances.keys()]) {
      try {
        const r = await this.deregisterInstance(agentType, instanceId, RemovalReason.Operator);
        revision = Math.max(revision, r.revision);
        removed.push(instanceId);
      } catch (e) {
        // Gone meanwhile (evicted or deregistered by itself): that is what was asked.
        if (!(e instanceof RegistryError && e.code === ErrorCode.UnknownInstance)) throw e;
      }
    }
    return { agent_type: agentType, instance_id: null, agent_removed: true, revision, instances: removed };
  }

  /**
   * The only agent types the fleet rules can concern: those consuming the same subject and,
   * under policy reject, those declaring one of the same capabilities. Looked up in the
   * view's indexes so a registration costs the same with 10 or 10,000 agent types.
   */
  private fleetCandidates(spec: AgentSpec): AgentState[] {
    const { view, settings } = this.deps;
    const types = new Set(view.consumersOf(spec.nats_subject));
    if (settings.duplicateCapabilities === "reject") for (const c of spec.capabilities) for (const t of view.providersOf(c.name)) types.add(t);
    types.delete(spec.agent_type);
    const out: AgentState[] = [];
    for (const t of types) {
      const a = view.get(t);
      if (a) out.push(a);
    }
    return out;
  }

  private validate(agentType: string, rawSpec: unknown, isStatic: boolean): ReturnType<typeof validateSpec> {
    const budget = isStatic ? undefined : this.deps.specBudget;
    if (!budget) return validateSpec(rawSpec, this.deps.checker);
    const now = this.deps.clock.now();
    const wait = budget.waitMs(agentType, now);
    if (wait > 0) {
      throw new RateLimitedError(`agent type ${agentType} used its spec validation budget (${budget.ratePerSecond} ms per second); retry in ${wait} ms`);
    }
    const started = performance.now();
    try {
      return validateSpec(rawSpec, this.deps.checker);
    } finally {
      budget.spend(agentType, performance.now() - started, now);
    }
  }

  private liveOthers(agentType: string, instanceId: string): number {
    let n = 0;
    for (const id of this.deps.view.get(agentType)?.instances.keys() ?? []) if (id !== instanceId) n++;
    return n;
  }

  /**
   * Runs `attempt` with what the view holds, then with what the store holds after each lost
   * race. A view that does not know the instance is checked against the store before
   * `unknown_instance` is answered (the register may have gone through another replica).
   */
  private async withRetries(agentType: string, instanceId: string, attempt: (current: Current) => Promise<number>): Promise<number> {
    let current = this.deps.view.current(agentType, instanceId);
    let fromStore = false;
    for (let i = 1; ; i++) {
      try {
        return await attempt(current);
      } catch (e) {
        const lostRace = e instanceof StoreConflictError;
        const maybeStale = !fromStore && e instanceof RegistryError && e.code === ErrorCode.UnknownInstance;
        if (lostRace) this.deps.onConflict?.();
        if (!(lostRace || maybeStale)) throw this.storeError(e);
        if (i >= MAX_WRITE_ATTEMPTS) {
          throw new RegistryError(ErrorCode.Conflict, `lost the write race on ${agentType}/${instanceId} ${MAX_WRITE_ATTEMPTS} times in a row`, { cause: e });
        }
        await this.deps.catchUp?.();
        current = await this.readCurrent(agentType, instanceId);
        fromStore = true;
      }
    }
  }

  /** A store that cannot be reached is told to whoever must not trust missing heartbeats meanwhile. */
  private storeError(e: unknown): unknown {
    if (e instanceof StoreUnavailableError) this.deps.onUnavailable?.();
    return mapStoreError(e);
  }

  private async readCurrent(agentType: string, instanceId: string): Promise<Current> {
    try {
      const [a, i] = await Promise.all([this.deps.store.get(agentKey(agentType)), this.deps.store.get(instanceKey(agentType, instanceId))]);
      const agentRecord = a && a.operation === "PUT" ? decodeAgentRecord(a.value) : null;
      const instanceRecord = i && i.operation === "PUT" ? decodeInstanceRecord(i.value) : null;
      return {
        agent: agentRecord && a ? { record: agentRecord, revision: a.revision } : null,
        instance: instanceRecord && i ? { record: instanceRecord, revision: i.revision } : null,
      };
    } catch (e) {
      throw this.storeError(e);
    }
  }
}

function mapStoreError(e: unknown): unknown {
  if (e instanceof StoreUnavailableError) return new RegistryError(ErrorCode.Unavailable, "the store cannot be reached", { cause: e });
  return e;
}

/** 16 characters of [A-Za-z0-9_-]: unique enough for replicas, short enough for subjects. */
export function newInstanceId(): string {
  return randomBytes(12).toString("base64url");
}
