/**
 * The write use cases: register, heartbeat, deregister (an instance or a whole type). Each
 * plans its writes with the pure rules of domain/registration.ts from what this replica's view
 * holds, writes with compare-and-set, and on a lost race re-reads the keys from the store and
 * plans again (the view may lag, and KV gets are not read-your-writes). Five lost races in a
 * row answer `conflict`.
 */
import { ErrorCode, RegistryError, ShedError, invalidSpec, notFound, unknownInstance } from "../../domain/errors.js";
import type { Quotas } from "../../domain/lifecycle/quotas.js";
import type { ByteBudgets } from "../../domain/lifecycle/byte-budgets.js";
import type { TypeBudgets } from "../../domain/rate-limit.js";
import { InstanceStatus, STATIC_INSTANCE_ID, type AgentState } from "../../domain/model/model.js";
import type { AgentSpec } from "../../domain/spec/spec.js";
import type { RegisterMessage, HeartbeatMessage } from "../../domain/messages.js";
import { HeartbeatCoalescer } from "../liveness/heartbeat-coalescer.js";
import { StatusDamper } from "../liveness/status-damper.js";
import { StoreConflictError, StoreFullError, StoreUnavailableError, type Store } from "../../domain/ports.js";
import {
  agentKey,
  decodeAgentRecord,
  decodeInstanceRecord,
  encodeRecord,
  instanceKey,
  RemovalReason,
} from "../../domain/model/records.js";
import { isSuspect, lateIntervals } from "../../domain/lifecycle/liveness.js";
import { planHeartbeat, planRegister, planRemoval, type Current } from "../../domain/lifecycle/registration.js";
import { bindRegisterBody, type PlainTenantScope } from "../../domain/lifecycle/tenant-binding.js";
import { describeIssues, type SchemaChecks } from "../../domain/spec/validation.js";
import { changesGraph } from "../../domain/graph/graph-guard.js";
import { DependencyGuard } from "./dependency-guard.js";
import { subjectIssues, type SubjectRules } from "../../domain/spec/subject-rules.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { Clock } from "../clock.js";
import type { HeartbeatReply, RegisterReply } from "../../protocol/messages.js";
import { isoTime } from "../../protocol/iso-time.js";
import type { Logger } from "../../kit/logger.js";
import { SpecAdmission } from "./spec-admission.js";
import { checkByteBudgetsOf, checkCountQuotas, checkDependencies, instanceTerms, type InstanceTerms } from "./registration-checks.js";
import { newInstanceId } from "./instance-id.js";
import { storeError } from "./store-errors.js";
import type { TrustGate } from "./trust-gate.js";
import { ApprovalPolicy, ApprovalState, type Approval } from "../../domain/trust/approval-policy.js";
import { approvalView } from "../../domain/query/agent-view.js";
import { decodeClaim, encodeClaim, subjectClaimKey, type StoredClaim } from "../../domain/model/subject-claims.js";

export const MAX_WRITE_ATTEMPTS = 5;
/** Unresolvable refs named in one reply, as for any spec issue. */

/** `prefix` and `subjectPolicy` (SubjectRules) are the nats_subject rules that need the configuration. */
export type RegistrarSettings = SubjectRules & {
  readonly missedHeartbeats: number;
  readonly defaultHeartbeatIntervalMs: number;
  readonly minHeartbeatIntervalMs: number;
  readonly maxHeartbeatIntervalMs: number;
  readonly duplicateCapabilities: "allow" | "reject";
  /** The heartbeat subject a register reply names: the tenant's form for a tenant's registration. */
  readonly heartbeatSubject: (agentType: string, instanceId: string, tenant?: string | null) => string;
  /** A tenant_scope on the plain register subject: refused (default) or, while migrating, allowed (tenant-binding.ts). */
  readonly plainTenantScope?: PlainTenantScope;
  /** The bucket's max_bytes (0: unlimited), named when a write finds the store full. */
  readonly bucketMaxBytes: number;
  /** Stored status changes per instance per second (0: no bound); see status-damper.ts. */
  readonly statusChangesPerSecond?: number;
  /** Instances whose heartbeat may be in the store's hands at once; past it: 503 at once (heartbeat-coalescer.ts). */
  readonly maxHeartbeatWrites?: number;
} & Quotas &
  /** Bytes of the bucket per agent type and per tenant (byte-budgets.ts); absent or 0: none. */
  Partial<ByteBudgets>;

export type RegistrarDeps = {
  store: Store;
  view: RegistryView;
  /** Compiles capability schemas; the service's runs off the event loop (service/registration/schema-checks.ts). */
  checker: SchemaChecks;
  clock: Clock;
  settings: RegistrarSettings;
  /** Told of every lost compare-and-set (a metric). */
  onConflict?: () => void;
  /**
   * Milliseconds of spec validation per second per agent type (REGISTRY_TYPE_SPEC_CHECK_MS):
   * schema compilation is the costliest work a request can ask for (up to ~1 s for a 256 KiB
   * spec of distinct schemas, docs/reliability.md); unchanged specs hit the verdict cache.
   * It runs in worker threads, so the budget keeps one type from taking the pool, not the loop.
   */
  specBudget?: TypeBudgets;
  /**
   * The monotonic clock (ms) that times the work a registration does on the event loop,
   * resolving its schemas' refs and preparing the resolved schemas for compilation, charged
   * to `specBudget` like compilation (performance.now by default; tests set the cost).
   */
  workClock?: () => number;
  /** Told of each status change held back by the per-instance bound (a metric). */
  onStatusHeld?: () => void;
  /**
   * Memory liveness (docs/architecture.md, "Scale"): while `enabled()`, a heartbeat that changes
   * nothing durable is answered from the view without a write, and `heard` tells the other
   * replicas (service/liveness/heard-fanout.ts). Absent: every heartbeat is written.
   */
  memoryLiveness?: { enabled(): boolean; heard(agentType: string, instanceId: string, activeTasks: number | undefined): void };
  /** Told when a write or read could not reach the store (a heartbeat may have been lost). */
  onUnavailable?: () => void;
  /**
   * Brings the view up to the store's current revision (bounded wait). Called before a retry:
   * the rules that span instances (a rollback keeps the newer spec while an instance of it
   * is live) read the view, and a lost race means the view was behind. Called once before the
   * checks that read other agent types (dependencies, count quotas near a limit, policy reject).
   */
  catchUp?: () => Promise<void>;
  /**
   * Resolves true once the view has applied `revision` (bounded wait): the dependency guard's
   * check needs the view at the graph key's revision, not merely closer to it. Absent: catchUp
   * is called when the view is behind; with neither (unit tests that feed the view
   * themselves), the view is taken as current.
   */
  viewAt?: (revision: number) => Promise<boolean>;
  /** Where a deliberate overwrite of a version's spec is reported (PROTOCOL.md section 9). */
  log?: Logger;
  /** Verifies signed specs and cards against the tenants' trust roots (trust-gate.ts); absent: trust off. */
  trust?: TrustGate;
};

export type { RegisterReply };


export type DeregisterReply = { agent_type: string; instance_id: string | null; agent_removed: boolean; revision: number; instances?: string[] };

/**
 * How a registration came: `tenant` is the tenant its subject names (null: the plain subject),
 * absent for one that came on no subject (the registry file, tests); `static` for the file's.
 */
export type RegisterOptions = { static?: boolean; tenant?: string | null };

/** What a registration writes, once its spec and terms are checked. */
type RegistrationWrite = {
  spec: AgentSpec;
  terms: InstanceTerms;
  replace: boolean;
  isStatic: boolean;
  judged: Awaited<ReturnType<TrustGate["judge"]>> | undefined;
  catchUp: () => Promise<void>;
  /** The reply's warnings, which the plan adds its notes to. */
  warnings: string[];
};
type RegistrationWritten = { revision: number; holdingRevision: number; releaseSubject: string | null; replaced: boolean; approval: Approval | undefined };

export class Registrar {
  /** Overlapping heartbeats of one instance become one write at a time (heartbeat-coalescer.ts). */
  private readonly beats: HeartbeatCoalescer<HeartbeatReply>;

  /** At most so many stored status changes per instance per second (status-damper.ts). */
  private readonly damper: StatusDamper;

  /** Register bodies' specs, imported and validated once (spec-admission.ts). */
  private readonly specs: SpecAdmission;

  /** Intervals of silence after which a heartbeat is written rather than answered from memory. */
  private readonly lateAfter: number;

  /** Spec writes that can close a dependency cycle take turns (dependency-guard.ts). */
  private readonly graph: DependencyGuard;

  constructor(private readonly deps: RegistrarDeps) {
    this.lateAfter = lateIntervals(deps.settings.missedHeartbeats);
    this.specs = new SpecAdmission(deps);
    const { view, catchUp } = deps;
    this.graph = new DependencyGuard({
      store: deps.store,
      view,
      viewAt: deps.viewAt ?? (async (revision) => view.revision >= revision || catchUp === undefined || (await catchUp(), view.revision >= revision)),
      onConflict: deps.onConflict,
      onDropped: (n) => deps.log?.warn({ dropped: n }, "graph key full: the oldest pending spec writes were dropped from it (their writers may have died)"),
    });
    this.beats = new HeartbeatCoalescer((agentType, instanceId, msg) => this.writeHeartbeat(agentType, instanceId, msg), deps.settings.maxHeartbeatWrites);
    const perSecond = deps.settings.statusChangesPerSecond ?? 0;
    this.damper = new StatusDamper({
      windowMs: perSecond > 0 ? 1000 / perSecond : 0,
      clock: deps.clock,
      // A held change is written as a heartbeat carrying it; if the instance left meanwhile, so did the need.
      flush: (agentType, instanceId, status) => {
        try {
          void Promise.resolve(this.heartbeat(agentType, instanceId, { status })).catch(() => undefined);
        } catch {
          // As a rejection: the agent's next heartbeat carries its status again.
        }
      },
      onHeld: deps.onStatusHeld,
    });
  }

  /** Drops held status changes and their timers (shutdown). */
  stop(): void {
    this.damper.stop();
  }

  async register(agentType: string, body: RegisterMessage, opts: RegisterOptions = {}): Promise<RegisterReply> {
    const { settings, view } = this.deps;
    // Signatures are bounded before the spec costs anything; the registry file's are not checked (the operator's own).
    const presented = opts.static === true ? null : (this.deps.trust?.presented(body, opts.tenant) ?? null);
    // The subject's tenant goes into the body before anything reads or remembers it.
    const msg = opts.tenant === undefined ? body : bindRegisterBody(body, opts.tenant, settings.plainTenantScope ?? "allow");
    // A card or a tool spec becomes a raw spec in admit(), then is validated like any other.
    const validated = await this.specs.admit(agentType, msg, opts.static === true);
    const spec = validated.spec;
    if (typeof opts.tenant === "string" && spec.tenant_scope !== opts.tenant) {
      // bindRegisterBody filled or checked it; a spec of another tenant here is a bug, never stored.
      throw new RegistryError(ErrorCode.Internal, `the spec of ${agentType} came out with tenant_scope ${String(spec.tenant_scope)} on tenant ${opts.tenant}'s subject`);
    }
    // Judged on the body as signed, once the spec's tenant is known; a refusal stores nothing.
    const judged = await this.deps.trust?.judge(presented, body, spec, this.deps.clock.now());
    const warnings = [...validated.warnings];
    const subjectProblems = subjectIssues(agentType, spec.nats_subject, settings);
    if (subjectProblems.length > 0) throw invalidSpec(`spec is invalid: ${describeIssues(subjectProblems)}`, subjectProblems);
    // The checks that read other agent types from the view (dependencies, the count quotas,
    // policy reject) first bring it up to the store: a write is answered before this replica's
    // view has applied it. One catch-up serves them all.
    let caughtUp: Promise<void> | undefined;
    const catchUp = (): Promise<void> => (caughtUp ??= this.deps.catchUp?.() ?? Promise.resolve());
    if (spec.depends?.length) warnings.push(...(await checkDependencies(view, spec, catchUp)));
    const { instanceId, interval, status, metadata } = instanceTerms(msg, opts.static === true, settings, warnings);
    if (!opts.static) await checkCountQuotas(this.deps, spec, instanceId, metadata, catchUp);

    // Under policy reject, a spec this view does not hold yet is checked against the other
    // types' capabilities as the store has them, not as a lagging view does.
    if (settings.duplicateCapabilities === "reject" && !opts.static && view.get(agentType)?.spec !== spec) await catchUp();

    const { revision, holdingRevision, releaseSubject, replaced, approval } = await this.writeRegistration(agentType, {
      spec,
      terms: { instanceId, interval, status, metadata },
      replace: msg.replace === true,
      isStatic: opts.static === true,
      judged,
      catchUp,
      warnings,
    });
    if (holdingRevision > 0) this.specs.remember(agentType, validated, holdingRevision);
    if (releaseSubject !== null) await this.releaseClaim(agentType, releaseSubject);
    if (replaced) {
      // Specs are immutable per version; an overwrite is an operator's act worth a trace.
      const how = opts.static ? "by the registry file" : "with replace";
      this.deps.log?.warn({ agent_type: agentType, version: spec.version, instance_id: instanceId, static: opts.static === true }, `spec of an existing version overwritten ${how}`);
    }
    // Under policy manual (docs/trust.md): the instance is stored, but routed to only once an operator approves its spec.
    if (approval !== undefined && approval.state !== ApprovalState.Approved) {
      const why = approval.state === ApprovalState.Pending ? "waits for an operator's approval" : "was rejected by an operator";
      warnings.push(`spec ${spec.version} ${why}: the instance is stored but not routable until the spec is approved`);
    }
    return {
      agent_type: agentType,
      version: spec.version,
      instance_id: instanceId,
      status,
      revision,
      ...(approval !== undefined ? { approval: approvalView(approval) } : {}),
      heartbeat_subject: settings.heartbeatSubject(agentType, instanceId, typeof opts.tenant === "string" ? opts.tenant : null),
      heartbeat_interval_ms: interval,
      evict_after_ms: interval * settings.missedHeartbeats,
      warnings,
      ...(validated.a2aVersion !== undefined ? { a2a_version: validated.a2aVersion } : {}),
    };
  }

  /**
   * The registration's writes, retried on lost compare-and-sets (withRetries): the subject
   * claim, the spec record when it changes (in its turn on the graph key when it can close a
   * dependency cycle, dependency-guard.ts), then the instance.
   */
  private async writeRegistration(agentType: string, w: RegistrationWrite): Promise<RegistrationWritten> {
    const { settings, view } = this.deps;
    const { spec, judged, catchUp, warnings } = w;
    const { instanceId, interval, status, metadata } = w.terms;
    const approvalPolicy = this.deps.trust?.approvalPolicy(spec.tenant_scope ?? null) ?? ApprovalPolicy.Auto;
    let approval: Approval | undefined;
    let attempts = 0;
    let releaseSubject: string | null = null;
    let replaced = false;
    // The revision of the spec record that holds this spec once written (0: it does not).
    let holdingRevision = 0;
    // This registration's intent on the graph key, if it took a turn there, and whether a spec
    // write it admitted may have landed without an answer (then the intent must stay).
    let graphIntent: string | null = null;
    let specWriteUnknown = false;
    const attempt = async (current: Current): Promise<number> => {
      const otherLiveVersions: string[] = [];
      for (const i of view.get(agentType)?.instances.values() ?? []) if (i.instance_id !== instanceId) otherLiveVersions.push(i.version);
      const claim = await this.claimOf(spec, ++attempts > 1);
      const plan = planRegister(
        { spec, instanceId, heartbeatIntervalMs: interval, status, metadata, static: w.isStatic, replace: w.replace, ...(judged ? { trust: judged.trust, signed: judged.signed } : {}), approvalPolicy },
        current,
        { otherLiveVersions, others: this.fleetCandidates(spec), duplicateCapabilities: settings.duplicateCapabilities, claim },
        this.deps.clock.now(),
      );
      warnings.push(...plan.notes.filter((n) => !warnings.includes(n)));
      const agentWrite = plan.agentWrite;
      const agentValue = agentWrite === null ? null : encodeRecord(agentWrite.record);
      const instanceValue = encodeRecord(plan.instanceWrite.record);
      if (!w.isStatic) await checkByteBudgetsOf(this.deps, spec, instanceId, metadata, agentValue, instanceValue, catchUp);
      const guarded = agentWrite !== null && changesGraph(spec, current.agent?.record.spec);
      const writeSpec = async (): Promise<number> => {
        // The claim first: a registration that loses it has written nothing (subject-claim.ts).
        if (plan.claimWrite) {
          await this.deps.store.write(subjectClaimKey(spec.nats_subject), encodeClaim(plan.claimWrite.record), plan.claimWrite.expectedRevision);
        }
        if (!agentWrite || !agentValue) return current.agent?.revision ?? 0;
        if (!guarded) return this.deps.store.write(agentKey(agentType), agentValue, agentWrite.expectedRevision);
        specWriteUnknown = true;
        try {
          const written = await this.deps.store.write(agentKey(agentType), agentValue, agentWrite.expectedRevision);
          specWriteUnknown = false;
          return written;
        } catch (e) {
          // A lost compare-and-set wrote nothing; a timeout may have written.
          if (e instanceof StoreConflictError) specWriteUnknown = false;
          throw e;
        }
      };
      let specRevision: number;
      if (guarded) {
        graphIntent ??= newInstanceId();
        specRevision = await this.graph.admitted(spec, agentWrite.expectedRevision, graphIntent, writeSpec);
      } else {
        specRevision = await writeSpec();
      }
      holdingRevision = plan.holdsSpec ? specRevision : 0;
      releaseSubject = plan.releaseSubject;
      replaced = plan.replaced;
      approval = plan.approval;
      return this.deps.store.write(instanceKey(agentType, instanceId), instanceValue, plan.instanceWrite.expectedRevision);
    };
    try {
      const revision = await this.withRetries(agentType, instanceId, attempt);
      return { revision, holdingRevision, releaseSubject, replaced, approval };
    } catch (e) {
      // An intent whose spec never landed would count as on its way until the type's key is written.
      if (graphIntent !== null && !specWriteUnknown) await this.graph.withdraw(graphIntent).catch(() => undefined);
      throw e;
    }
  }

  /**
   * The reply itself when memory liveness answers (no promise: this is the hot path at a
   * million instances), else a promise of the written heartbeat's reply.
   */
  heartbeat(agentType: string, instanceId: string, msg: HeartbeatMessage, tenant?: string): HeartbeatReply | Promise<HeartbeatReply> {
    if (tenant !== undefined) return this.inTenant(agentType, tenant, () => unknownInstance(agentType, instanceId), () => this.heartbeat(agentType, instanceId, msg));
    const answered = this.answerFromMemory(agentType, instanceId, msg);
    if (answered !== null) return answered;
    const written = this.beats.heartbeat(agentType, instanceId, msg);
    if (written !== null) return written;
    // Shed: the heartbeat is lost as surely as one whose write timed out, so the evictor is
    // told the same way (every instance gets a whole window again), and the agent retries.
    this.deps.onUnavailable?.();
    throw new ShedError(
      `the heartbeat of ${agentType}/${instanceId} was not written: ${this.beats.inFlight} heartbeat writes are already waiting for a slow store (REGISTRY_MAX_HEARTBEAT_WRITES); retry`,
    );
  }

  /**
   * Memory liveness: the heartbeat recorded in the view, with no write, when it changes nothing
   * durable and no eviction can be racing it; null when it must be written. Written instead:
   * an instance this view does not hold (the store says whether it exists), a status change, a
   * write of the instance in flight (the heartbeat joins it), a suspect mark (the write clears
   * it, and its compare-and-set settles the race with the evictor's tombstone), or an instance
   * this replica has not heard for `late` intervals (a mark may be on its way here).
   */
  private answerFromMemory(agentType: string, instanceId: string, msg: HeartbeatMessage): HeartbeatReply | null {
    const memory = this.deps.memoryLiveness;
    if (memory === undefined || !memory.enabled()) return null;
    const live = this.deps.view.get(agentType)?.instances.get(instanceId);
    if (live === undefined || live.instance_id === STATIC_INSTANCE_ID) return null;
    if ((msg.status !== undefined && msg.status !== live.status) || isSuspect(live)) return null;
    if (this.beats.writing(agentType, instanceId)) return null;
    const now = this.deps.clock.now();
    if (now - live.observed_at >= this.lateAfter * live.heartbeat_interval_ms) return null;
    this.deps.view.heardInstance(live, now, msg.active_tasks);
    memory.heard(agentType, instanceId, msg.active_tasks);
    return { status: live.status, revision: live.revision, last_heartbeat: isoTime(now) };
  }

  private async writeHeartbeat(agentType: string, instanceId: string, msg: HeartbeatMessage): Promise<HeartbeatReply> {
    let status: InstanceStatus = InstanceStatus.Ready;
    let stamp = 0;
    try {
      let stored: InstanceStatus | undefined;
      const revision = await this.withRetries(agentType, instanceId, async (current) => {
        stored = current.instance?.record.kind === "instance" ? current.instance.record.status : undefined;
        const wanted = stored === undefined ? msg.status : this.damper.admit(agentType, instanceId, stored, msg.status);
        const plan = planHeartbeat(agentType, instanceId, current.instance, { status: wanted, activeTasks: msg.active_tasks }, this.deps.clock.now());
        status = plan.record.status;
        stamp = plan.record.last_heartbeat;
        return this.deps.store.write(instanceKey(agentType, instanceId), encodeRecord(plan.record), plan.expectedRevision);
      });
      if (stored !== undefined && status !== stored) this.damper.changed(agentType, instanceId);
      return { status, revision, last_heartbeat: isoTime(stamp) };
    } catch (e) {
      // Only other replicas' writes of the same instance can still race a heartbeat here: a
      // busy key, not the agent's fault, so `unavailable` (retry) rather than `conflict`.
      if (e instanceof RegistryError && e.code === ErrorCode.Conflict) {
        throw new RegistryError(ErrorCode.Unavailable, `the heartbeat of ${agentType}/${instanceId} lost ${MAX_WRITE_ATTEMPTS} write races to other replicas; retry`, { cause: e });
      }
      // A full store is no quota of the agent's: nothing it could trim. It retries, and
      // meanwhile the evictor gives every instance a whole window (storeError).
      if (e instanceof RegistryError && e.code === ErrorCode.LimitExceeded) {
        throw new RegistryError(ErrorCode.Unavailable, `the heartbeat of ${agentType}/${instanceId} was not stored: the registry's store is full (REGISTRY_BUCKET_MAX_BYTES); retry`, { cause: e });
      }
      throw e;
    }
  }

  async deregisterInstance(agentType: string, instanceId: string, reason: RemovalReason = RemovalReason.Graceful, tenant?: string): Promise<DeregisterReply> {
    if (tenant !== undefined) await this.inTenant(agentType, tenant, () => unknownInstance(agentType, instanceId), () => undefined);
    const revision = await this.withRetries(agentType, instanceId, async (current) => {
      const plan = planRemoval(agentType, instanceId, current.instance, reason, this.deps.clock.now());
      return this.deps.store.write(instanceKey(agentType, instanceId), encodeRecord(plan.record), plan.expectedRevision);
    });
    let others = this.liveOthers(agentType, instanceId);
    if (others === 0 && this.deps.catchUp) {
      // The view may not yet hold another instance whose registration was already answered
      // (CI saw agent_removed true with one live); only a "none left" answer is worth the wait.
      await this.deps.catchUp();
      others = this.liveOthers(agentType, instanceId);
    }
    return { agent_type: agentType, instance_id: instanceId, agent_removed: others === 0, revision };
  }

  /** Operator action: every live instance of the type leaves with reason `operator`. */
  async deregisterType(agentType: string, tenant?: string): Promise<DeregisterReply> {
    const unknown = () => notFound(`agent type ${agentType} is not registered`);
    if (tenant !== undefined) await this.inTenant(agentType, tenant, unknown, () => undefined);
    // An operator's action, rare: read the store's latest, so an instance registered just before
    // (whose write this replica's view may not have applied yet) is removed too, not left behind.
    await this.deps.catchUp?.();
    const agent = this.deps.view.get(agentType);
    if (!agent) throw unknown();
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
   * Runs `write` when the agent type is `tenant`'s: a write on a tenant's subject reaches only
   * that tenant's agents (a type of another tenant, or a shared one, is unknown there, answered
   * `refuse()`). Synchronous when the view holds the type (heartbeats stay on their fast path);
   * a type it does not hold yet is looked for again once the view caught up with the store.
   */
  private inTenant<T>(agentType: string, tenant: string, refuse: () => Error, write: () => T | Promise<T>): T | Promise<T> {
    const known = this.deps.view.get(agentType);
    if (known !== undefined) {
      if (known.spec.tenant_scope !== tenant) throw refuse();
      return write();
    }
    return (async () => {
      await this.deps.catchUp?.();
      if (this.deps.view.get(agentType)?.spec.tenant_scope !== tenant) throw refuse();
      return write();
    })();
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

  /**
   * What the claim key of the spec's subject holds: the view's copy on a first attempt, the
   * store's after a lost race. A claim the view says another type holds is read again from
   * the store before anyone is told `conflict`: the view may not have seen it given back.
   */
  private async claimOf(spec: AgentSpec, fromStore: boolean): Promise<StoredClaim | null> {
    const seen = this.deps.view.claims.forSubject(spec.nats_subject) ?? null;
    if (!fromStore && (seen === null || seen.record.agent_type === spec.agent_type)) return seen;
    try {
      const e = await this.deps.store.get(subjectClaimKey(spec.nats_subject));
      const record = e && e.operation === "PUT" ? decodeClaim(e.value) : null;
      return record && e ? { record, revision: e.revision } : null;
    } catch (e) {
      throw this.storeError(e);
    }
  }

  /**
   * Gives back the claim of a subject this type no longer uses (its new spec is stored). Best
   * effort: a claim left behind is an orphan that the retention sweep removes.
   */
  private async releaseClaim(agentType: string, subject: string): Promise<void> {
    const claim = this.deps.view.claims.forSubject(subject);
    if (!claim || claim.record.agent_type !== agentType) return;
    await this.deps.store.remove(subjectClaimKey(subject), claim.revision).catch(() => undefined);
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

  /**
   * A store that cannot be reached, or is full, is told to whoever must not trust missing
   * heartbeats meanwhile: a full bucket refuses heartbeats as surely as an absent one, and
   * the evictor must not take the instances it refused for dead (issue 35).
   */
  private storeError(e: unknown): unknown {
    if (e instanceof StoreUnavailableError || e instanceof StoreFullError) this.deps.onUnavailable?.();
    return storeError(e, this.deps.settings.bucketMaxBytes);
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
