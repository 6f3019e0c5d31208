/**
 * The state the registry holds about agents, as the view keeps it in memory. Times are
 * epoch milliseconds stamped by the registry's clock (the clock of the replica that wrote the
 * record, except `observed_at`); the wire shows them as ISO 8601.
 */
import type { Attestation } from "../trust/verify-signatures.js";
import type { Approval } from "../trust/approval-policy.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { SignedEvidence } from "../trust/signed-evidence.js";
import type { Deprecation } from "../trust/deprecation.js";
import type { AgentSpec } from "../spec/spec.js";

import { AgentStatus, InstanceStatus, STATIC_INSTANCE_ID } from "../../protocol/states.js";

export { AgentStatus, InstanceStatus, STATIC_INSTANCE_ID };

/** The writable form of a readonly type, for the view code that updates its own objects in place. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A live instance as the view holds it. The view updates it in place on every heartbeat
 * (docs/performance.md): read it synchronously, or copy it to keep it across an await.
 */
export type InstanceState = {
  readonly agent_type: string;
  readonly instance_id: string;
  readonly version: string;
  readonly status: InstanceStatus;
  readonly registered_at: number;
  /**
   * As stored: stamped by the clock of whichever replica took the heartbeat, which may be
   * skewed against this one's. Shown to clients; never compared with this replica's clock.
   */
  readonly last_heartbeat: number;
  readonly heartbeat_interval_ms: number;
  readonly active_tasks: number;
  readonly metadata: Readonly<Record<string, string>>;
  /** Store revision of the instance record. */
  readonly revision: number;
  /**
   * When this replica's view applied the instance's latest register or heartbeat, on this
   * replica's own clock: liveness deadlines count from it, so they never compare two
   * machines' clocks (domain/lifecycle/liveness.ts).
   */
  readonly observed_at: number;
  /**
   * Memory liveness (docs/architecture.md, "Suspect marks"): the evicting replica's stamp of the
   * suspect mark the stored record carries, or null (absent on instances built outside the
   * view). Applying a mark is not hearing the instance: `observed_at` stays.
   */
  readonly suspect_since?: number | null;
  /** When this replica's view applied that mark, on its own clock (0 when unmarked). */
  readonly mark_seen_at?: number;
  /** The size of the instance key's value in the bucket, estimated (domain/view/stored-bytes.ts; absent outside the view). */
  readonly stored?: number;
};

export type AgentState = {
  readonly agent_type: string;
  readonly spec: AgentSpec;
  /** When the agent type was first registered (kept across spec updates). */
  readonly registered_at: number;
  /** When the spec record last changed (v1.2 AgentView `updated_at`); absent: as registered_at. */
  readonly updated_at?: number;
  /** Store revision of the spec record. */
  readonly revision: number;
  /** Live instances by instance_id. */
  readonly instances: ReadonlyMap<string, InstanceState>;
  /** Aggregate over instances: ready > draining > registered; none live: deregistered. */
  readonly status: AgentStatus;
  /** When the last live instance left; null while any is live. */
  readonly deregistered_at: number | null;
  /** Loaded from a registry file (the operator's own); absent outside the view. */
  readonly static?: boolean;
  /** v1.2: how the stored spec was verified (docs/trust.md); absent: unverified. */
  readonly trust?: Attestation | undefined;
  /** v1.2: the stored spec's approval (docs/trust.md, "The approval gate"); absent: approved. */
  readonly approval?: Approval | undefined;
  /** v1.2: why the stored spec is no longer verified, or withheld (trust-standing.ts); absent: as registered. */
  readonly trust_lapse?: TrustLapse | undefined;
  /** v1.2: an operator deprecated the agent type (docs/trust.md, "Deprecation"); absent: not deprecated. Still routable. */
  readonly deprecation?: Deprecation | undefined;
  /** v1.2: the signatures the spec was registered with, kept to verify it again (signed-evidence.ts). */
  readonly signed?: SignedEvidence | undefined;
};

/** Aggregate status of an agent from its live instances (PROTOCOL.md section 2, AgentView). */
export function aggregateStatus(instances: Iterable<InstanceState>): AgentStatus {
  let best: AgentStatus = AgentStatus.Deregistered;
  for (const i of instances) {
    if (i.status === InstanceStatus.Ready) return AgentStatus.Ready;
    if (i.status === InstanceStatus.Draining) best = AgentStatus.Draining;
    else if (best === AgentStatus.Deregistered) best = AgentStatus.Registered;
  }
  return best;
}

/** Who may see an agent: shared agents (no tenant_scope) are seen by all, scoped ones by their tenant only. */
export function visibleTo(agent: AgentState, tenant: string | null): boolean {
  return scopeVisibleTo(agent.spec.tenant_scope, tenant);
}

/** The same rule on a tenant_scope alone, for what names one without the agent (a registered event's data). */
export function scopeVisibleTo(scope: string | null, tenant: string | null): boolean {
  return scope === null || scope === tenant;
}
