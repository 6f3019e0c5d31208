/**
 * An agent type as the view keeps it, from its stored agent record: built when the record is
 * first applied (taking over the instances and tombstones kept for it as orphans), then updated
 * in place by each record after, so readers holding it see the change (the view mutates in
 * place: 100,000 heartbeats a minute must not copy the world).
 */
import type { Attestation } from "../trust/verify-signatures.js";
import type { Approval } from "../trust/approval-policy.js";
import type { Deprecation } from "../trust/deprecation.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { SignedEvidence } from "../trust/signed-evidence.js";
import { capabilitiesByName } from "./capability-changes.js";
import type { AgentRecord, RemovalReason } from "../model/records.js";
import { AgentStatus, type InstanceState } from "../model/model.js";
import type { AgentSpec, Capability } from "../spec/spec.js";
import { detached } from "./memory.js";

/** `stored`: the size of the key's value in the bucket, the live record's before it if larger (stored-bytes.ts). */
export type Tombstone = { readonly at: number; readonly reason: RemovalReason; readonly revision: number; readonly stored: number };

export type MutableAgent = {
  agent_type: string;
  spec: AgentSpec;
  registered_at: number;
  updated_at: number;
  revision: number;
  instances: Map<string, InstanceState>;
  status: AgentStatus;
  deregistered_at: number | null;
  /** Instances that left and whose tombstones are still in the store. */
  gone: Map<string, Tombstone>;
  /** When an instance last left by any means (a tombstone or a deleted key). */
  left_at: number;
  static: boolean;
  /** v1.2: the stored spec's verification (records.ts); undefined: unverified. */
  trust: Attestation | undefined;
  /** v1.2: the stored spec's approval (approval-policy.ts); undefined: approved. */
  approval: Approval | undefined;
  /** v1.2: trust-standing.ts; undefined: as registered. */
  trust_lapse: TrustLapse | undefined;
  /** v1.2: signed-evidence.ts; undefined: none kept. */
  signed: SignedEvidence | undefined;
  /** v1.2: deprecation.ts; undefined: not deprecated. */
  deprecation: Deprecation | undefined;
  /** Capability name -> the capability in the spec, computed once per spec. */
  caps: ReadonlyMap<string, Capability>;
  /** The size of the spec key's value in the bucket (stored-bytes.ts). */
  stored: number;
};

/**
 * An agent type first applied, with the instances and tombstones the view kept for it until
 * its record came. Deregistered until the view counts its instances' statuses.
 */
export function newAgentState(agentType: string, record: AgentRecord, revision: number, stored: number, instances: Map<string, InstanceState>, gone: Map<string, Tombstone>): MutableAgent {
  return {
    agent_type: detached(agentType),
    spec: record.spec,
    registered_at: record.registered_at,
    updated_at: record.updated_at,
    revision,
    instances,
    status: AgentStatus.Deregistered,
    deregistered_at: null,
    gone,
    left_at: 0,
    static: record.static === true,
    trust: record.trust,
    approval: record.approval,
    trust_lapse: record.trust_lapse,
    signed: record.signed,
    deprecation: record.deprecation,
    caps: capabilitiesByName(record.spec),
    stored,
  };
}

/** A new record of an agent type the view holds, applied in place (record-events.ts's recordBefore takes what it held first). */
export function updateAgentState(agent: MutableAgent, record: AgentRecord, revision: number, stored: number): void {
  agent.stored = stored;
  agent.spec = record.spec;
  agent.registered_at = record.registered_at;
  agent.updated_at = record.updated_at;
  agent.revision = revision;
  agent.static = record.static === true;
  agent.trust = record.trust;
  agent.trust_lapse = record.trust_lapse;
  agent.signed = record.signed;
  agent.approval = record.approval;
  agent.deprecation = record.deprecation;
  agent.caps = capabilitiesByName(record.spec);
}

/** The agent record the view's agent was applied from (what `current` compares a write against). */
export function agentRecordOf(a: MutableAgent): AgentRecord {
  const { spec, registered_at, updated_at, trust, approval, trust_lapse, signed, deprecation } = a;
  const record: AgentRecord = a.static ? { kind: "agent", spec, registered_at, updated_at, static: true } : { kind: "agent", spec, registered_at, updated_at };
  return { ...record, ...(trust ? { trust } : {}), ...(approval ? { approval } : {}), ...(trust_lapse ? { trust_lapse } : {}), ...(signed ? { signed } : {}), ...(deprecation ? { deprecation } : {}) };
}
