/**
 * The pure decisions of the write path: given what the store holds now, what a register,
 * heartbeat or deregister writes. The service applies the plan with compare-and-set writes
 * and, on a lost race, re-reads and plans again.
 */
import semver from "semver";
import { conflict, unknownInstance } from "../errors.js";
import { AgentStatus, STATIC_INSTANCE_ID, type AgentState, type InstanceStatus } from "../model/model.js";
import { liveInstanceRecord, type AgentRecord, type GoneInstanceRecord, type InstanceRecord, type LiveInstanceRecord, type RemovalReason } from "../model/records.js";
import type { AgentSpec } from "../spec/spec.js";
import type { Attestation } from "../trust/verify-signatures.js";
import type { SignedEvidence } from "../trust/signed-evidence.js";
import { approvalOnRegister, ApprovalPolicy, type Approval } from "../trust/approval-policy.js";
import { describeDiff, sameContent, specDiff } from "../spec/spec-diff.js";
import type { StoredClaim } from "../model/subject-claims.js";
import { ownerName, planClaim, type ClaimWrite } from "./subject-claim.js";
import { checkTypeScope } from "./tenant-binding.js";

export type Versioned<T> = { readonly record: T; readonly revision: number };

export type Current = {
  readonly agent: Versioned<AgentRecord> | null;
  readonly instance: Versioned<InstanceRecord> | null;
};

export type RegisterCommand = {
  readonly spec: AgentSpec;
  readonly instanceId: string;
  readonly heartbeatIntervalMs: number;
  readonly status: InstanceStatus;
  readonly metadata: Readonly<Record<string, string>>;
  readonly static?: boolean;
  /**
   * Overwrite a stored spec of the same version that differs (PROTOCOL.md section 9): an
   * operator's deliberate act. A registry-file entry always does, as the file is the
   * operator's source of truth and may change a card without bumping its version.
   */
  readonly replace?: boolean;
  /** v1.2: the registration's verified signature (docs/trust.md); absent: unverified. */
  readonly trust?: Attestation;
  /** v1.2: the signatures it presented, kept to verify the spec again when trust roots change (signed-evidence.ts). */
  readonly signed?: SignedEvidence;
  /** v1.2: the tenant's approval policy (docs/trust.md, "The approval gate"); absent: auto. */
  readonly approvalPolicy?: ApprovalPolicy;
};

/** What the view knows about the rest of the fleet, for the rules that span agent types. */
export type FleetContext = {
  /** Versions of the other live instances of this agent type. */
  readonly otherLiveVersions: readonly string[];
  /** Live agent types other than this one. */
  readonly others: Iterable<AgentState>;
  readonly duplicateCapabilities: "allow" | "reject";
  /** What the claim key of the spec's nats_subject holds (null or absent: no claim). */
  readonly claim?: StoredClaim | null;
};

export type RegisterPlan = {
  /** The nats_subject claim to write before the spec record (subject-claim.ts); null: keep it. */
  readonly claimWrite: ClaimWrite | null;
  /** A subject this type no longer uses once the spec is written: its claim is given back. */
  readonly releaseSubject: string | null;
  /** The spec record to write, with the revision it must replace (0: must not exist); null: keep it. */
  readonly agentWrite: { record: AgentRecord; expectedRevision: number } | null;
  readonly instanceWrite: { record: LiveInstanceRecord; expectedRevision: number };
  readonly specChanged: boolean;
  /** The spec record holds cmd.spec once the plan is applied: written by it, or stored already. */
  readonly holdsSpec: boolean;
  /** The stored spec of the same version was overwritten with a different one (replace). */
  readonly replaced: boolean;
  /** v1.2: the approval of the spec the record holds once the plan is applied; undefined: approved (auto). */
  readonly approval: Approval | undefined;
  readonly notes: string[];
};

export function planRegister(cmd: RegisterCommand, current: Current, fleet: FleetContext, now: number): RegisterPlan {
  const stored = current.agent?.record;
  const notes: string[] = [];
  let replace = true;
  let rollback = false;
  let replaced = false;
  // Whether the spec differs from the stored one; computed once, it walks both specs.
  let differs = stored === undefined;
  if (stored) {
    // A registry-file entry is the operator's word and may move a type; an agent may not.
    if (cmd.static !== true) checkTypeScope(cmd.spec.agent_type, stored.spec.tenant_scope ?? null, cmd.spec.tenant_scope ?? null);
    const order = semver.compare(cmd.spec.version, stored.spec.version);
    if (order < 0) {
      const newerLive = fleet.otherLiveVersions.some((v) => semver.gte(v, stored.spec.version));
      if (newerLive) {
        replace = false;
        rollback = true;
        notes.push(`spec ${cmd.spec.version} registered but not stored: version ${stored.spec.version} is live`);
      }
    }
    differs = !sameContent(stored.spec, cmd.spec);
    if (order === 0 && differs) {
      // (agent_type, version) names one spec: another one under the same version is refused
      // unless it is a deliberate overwrite.
      if (cmd.replace !== true && cmd.static !== true) throw versionConflict(stored.spec, cmd.spec);
      replaced = true;
    } else if (order === 0 && (stored.static === true) === (cmd.static === true) && sameTrust(stored.trust, cmd.trust) && !keepsNewEvidence(stored, cmd)) {
      replace = false;
    }
  }
  const specChanged = replace && differs;
  if (replace) checkFleetRules(cmd.spec, fleet);

  // An agent type with no live instance may be swept (retention) at any moment, so its first
  // instance back rewrites the record even when unchanged: the CAS on its revision then races
  // the sweep's CAS delete and exactly one wins (a lost registration retries and re-creates
  // the record) instead of leaving a live instance with no spec behind it.
  const approval = approvalOnRegister(cmd.approvalPolicy ?? ApprovalPolicy.Auto, stored, cmd.spec, cmd.static === true);
  const revive = stored !== undefined && fleet.otherLiveVersions.length === 0 && current.instance?.record.kind !== "instance";
  const changed = replace && (specChanged || !stored || (stored.static === true) !== (cmd.static === true) || !sameTrust(stored.trust, cmd.trust) || keepsNewEvidence(stored, cmd));
  const agentWrite =
    revive || changed
      ? {
          record: {
            kind: "agent" as const,
            spec: cmd.spec,
            registered_at: stored?.registered_at ?? now,
            // When the record last changed (AgentView's updated_at, v1.2): a revival that rewrites
            // it unchanged, for the CAS above, keeps the time of the last change.
            updated_at: changed || !stored ? now : stored.updated_at,
            ...(cmd.static ? { static: true } : {}),
            ...(cmd.trust ? { trust: cmd.trust } : {}),
            ...(cmd.signed ? { signed: cmd.signed } : {}),
            ...(approval ? { approval } : {}),
            // The operator's deprecation outlives any registration of the type (deprecation.ts); a registry-file entry is deprecated in its file.
            ...(stored?.deprecation && cmd.static !== true ? { deprecation: stored.deprecation } : {}),
          },
          expectedRevision: current.agent?.revision ?? 0,
        }
      : null;

  // A rollback keeps the newer spec, and with it that spec's subject and claim.
  const claimWrite = rollback ? null : planClaim(cmd.spec, fleet.claim ?? null, fleet.others, agentWrite !== null, now);
  const releaseSubject = agentWrite && stored && stored.spec.nats_subject !== cmd.spec.nats_subject ? stored.spec.nats_subject : null;

  const previous = current.instance?.record;
  const live = previous?.kind === "instance" ? previous : null;
  const instance: LiveInstanceRecord = {
    kind: "instance",
    version: cmd.spec.version,
    status: cmd.status,
    registered_at: live?.registered_at ?? now,
    last_heartbeat: now,
    heartbeat_interval_ms: cmd.heartbeatIntervalMs,
    active_tasks: live?.active_tasks ?? 0,
    metadata: cmd.metadata,
    spec_changed: specChanged,
    // Only when true: the records of every heartbeat keep the shape they always had.
    ...(replaced ? { replaced: true } : {}),
  };
  return {
    claimWrite,
    releaseSubject,
    agentWrite,
    instanceWrite: { record: instance, expectedRevision: current.instance?.revision ?? 0 },
    specChanged,
    holdsSpec: agentWrite !== null || !differs,
    replaced,
    approval: agentWrite !== null ? approval : stored?.approval,
    notes,
  };
}

/**
 * Whether two registrations are verified alike (same key and publisher, or both unverified):
 * a change is written even when the spec is the same, so a spec signed later becomes
 * verified and one registered unsigned again stops being. The time alone is no change, so an
 * agent's restarts do not rewrite its spec record.
 */
function sameTrust(a: Attestation | undefined, b: Attestation | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.kid === b.kid && a.publisher === b.publisher;
}

/**
 * Whether a verified registration brings signatures a record stored before v1.2 kept them
 * lacks: it is then written once, so the spec can be verified again later (signed-evidence.ts).
 */
function keepsNewEvidence(stored: { readonly signed?: SignedEvidence | undefined }, cmd: RegisterCommand): boolean {
  return cmd.trust !== undefined && cmd.signed !== undefined && stored.signed === undefined;
}

/** 409 naming what differs, and the two ways out. */
function versionConflict(stored: AgentSpec, next: AgentSpec): Error {
  const what = describeDiff(specDiff(stored, next));
  return conflict(
    `${next.agent_type} ${next.version} is already registered with another spec (differs in: ${what}); ` +
      `register it under a new version, or send "replace": true to overwrite it`,
  );
}

/**
 * Duplicate capabilities refused under policy `reject`. (nats_subject uniqueness is the claim's
 * rule, subject-claim.ts.) The other type is named only when the registrant's tenant sees it.
 */
function checkFleetRules(spec: AgentSpec, fleet: FleetContext): void {
  if (fleet.duplicateCapabilities !== "reject") return;
  const names = new Set(spec.capabilities.map((c) => c.name));
  for (const other of fleet.others) {
    if (other.agent_type === spec.agent_type || other.status === AgentStatus.Deregistered) continue;
    const dup = other.spec.capabilities.find((c) => names.has(c.name));
    if (dup) {
      const who = ownerName(other.agent_type, other.spec.tenant_scope, spec.tenant_scope);
      throw conflict(`capability ${dup.name} is already provided by ${who} (policy: reject duplicates)`);
    }
  }
}

export type HeartbeatCommand = { readonly status?: InstanceStatus; readonly activeTasks?: number };

export function planHeartbeat(
  agentType: string,
  instanceId: string,
  current: Versioned<InstanceRecord> | null,
  cmd: HeartbeatCommand,
  now: number,
): { record: LiveInstanceRecord; expectedRevision: number } {
  if (!current || current.record.kind !== "instance") throw unknownInstance(agentType, instanceId);
  const prev = current.record;
  return {
    record: liveInstanceRecord({
      version: prev.version,
      status: cmd.status ?? prev.status,
      registered_at: prev.registered_at,
      // The registry's clock, never the agent's; a static entry keeps its own stamp.
      last_heartbeat: instanceId === STATIC_INSTANCE_ID ? prev.last_heartbeat : now,
      heartbeat_interval_ms: prev.heartbeat_interval_ms,
      active_tasks: cmd.activeTasks ?? prev.active_tasks,
      metadata: prev.metadata,
      spec_changed: false,
    }),
    expectedRevision: current.revision,
  };
}

export function planRemoval(
  agentType: string,
  instanceId: string,
  current: Versioned<InstanceRecord> | null,
  reason: RemovalReason,
  now: number,
): { record: GoneInstanceRecord; expectedRevision: number } {
  if (!current || current.record.kind !== "instance") throw unknownInstance(agentType, instanceId);
  const prev = current.record;
  return {
    record: {
      kind: "gone",
      version: prev.version,
      reason,
      at: now,
      registered_at: prev.registered_at,
      last_heartbeat: prev.last_heartbeat,
    },
    expectedRevision: current.revision,
  };
}

/** Specs compare by content, whatever the order of their keys (spec-diff.ts). */
export const sameSpec = sameContent;
