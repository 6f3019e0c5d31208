/**
 * The records the bucket holds for agent types and instances, as types: what records.ts
 * encodes and decodes and record-shapes.ts checks, apart from both so neither imports the other.
 */
import type { AgentSpec } from "../spec/spec.js";
import type { InstanceStatus } from "./model.js";
import type { RemovalReason } from "../../protocol/states.js";
import type { Attestation } from "../trust/verify-signatures.js";
import type { Approval } from "../trust/approval-policy.js";
import type { SignedEvidence } from "../trust/signed-evidence.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { Deprecation, Undeprecation } from "../trust/deprecation.js";

/** `agents.<agent_type>`: the spec every instance of the type shares. */
export type AgentRecord = {
  readonly kind: "agent";
  readonly spec: AgentSpec;
  readonly registered_at: number;
  readonly updated_at: number;
  /** Loaded from a registry file: its instance never expires. */
  readonly static?: boolean;
  /**
   * v1.2: the spec's signature verified against its tenant's trust roots at registration
   * (docs/trust.md). Absent: unverified (no trust, or none presented), as in every older record.
   */
  readonly trust?: Attestation;
  /**
   * v1.2: where the spec stands in its tenant's approval gate (docs/trust.md). Absent:
   * approved (policy auto, a registry-file entry, or a record written before v1.2).
   */
  readonly approval?: Approval;
  /**
   * v1.2: the signatures the spec was registered with and the canonical text they cover, kept
   * so the spec can be verified again when its tenant's trust roots change (signed-evidence.ts).
   */
  readonly signed?: SignedEvidence;
  /** v1.2: why the spec is not verified (any longer), from a re-judgement (trust-standing.ts). */
  readonly trust_lapse?: TrustLapse;
  /** v1.2: an operator deprecated the agent type (deprecation.ts); kept by every later registration. */
  readonly deprecation?: Deprecation;
  /** v1.2: who withdrew the deprecation, on the record that withdrew it only (for its event). */
  readonly undeprecation?: Undeprecation;
};

/** `instances.<agent_type>.<instance_id>` while the instance is live. */
export type LiveInstanceRecord = {
  readonly kind: "instance";
  readonly version: string;
  readonly status: InstanceStatus;
  readonly registered_at: number;
  readonly last_heartbeat: number;
  readonly heartbeat_interval_ms: number;
  readonly active_tasks: number;
  readonly metadata: Readonly<Record<string, string>>;
  /** Whether the registration that created this instance changed the stored spec (for the event). */
  readonly spec_changed: boolean;
  /**
   * Whether that registration overwrote a different spec of the same version ("replace",
   * PROTOCOL.md section 9). Written only when true, so heartbeat records and the records of
   * registries before v1.1 leave it out: absent reads as false.
   */
  readonly replaced?: boolean;
  /**
   * A suspect mark (memory liveness): the evicting replica found the instance late and stamped
   * this on its own clock. Only the evictor writes it; any other write of the record leaves it
   * out, which clears it. Older registries ignore it.
   */
  readonly suspect_since?: number;
};

/**
 * The same key once the instance has left: a tombstone that carries the reason, so the
 * deregistered event can be derived from the store alone. The evictor deletes tombstones
 * after the retention period.
 */
export type GoneInstanceRecord = {
  readonly kind: "gone";
  readonly version: string;
  readonly reason: RemovalReason;
  readonly at: number;
  readonly registered_at: number;
  readonly last_heartbeat: number;
};

export type InstanceRecord = LiveInstanceRecord | GoneInstanceRecord;
