/**
 * What the registry stores in its KV bucket (PROTOCOL.md section 6), key layout and the
 * record shapes. Only the registry writes these, so decoding is a sanity check, not a
 * security boundary; a record that does not decode is skipped and reported.
 */
import type { AgentSpec } from "./spec.js";
import type { InstanceStatus } from "./model.js";

export const AGENT_KEY_PREFIX = "agents.";
export const INSTANCE_KEY_PREFIX = "instances.";
/** Reserved prefix for the registry's own coordination keys (lease, canary). */
export const RESERVED_KEY_PREFIX = "_registry.";
export const LEASE_KEY = `${RESERVED_KEY_PREFIX}evictor`;

export const agentKey = (agentType: string): string => `${AGENT_KEY_PREFIX}${agentType}`;
export const instanceKey = (agentType: string, instanceId: string): string =>
  `${INSTANCE_KEY_PREFIX}${agentType}.${instanceId}`;

export type ParsedKey =
  | { kind: "agent"; agentType: string }
  | { kind: "instance"; agentType: string; instanceId: string }
  | { kind: "reserved"; name: string }
  | { kind: "unknown" };

export function parseKey(key: string): ParsedKey {
  if (key.startsWith(AGENT_KEY_PREFIX)) {
    const agentType = key.slice(AGENT_KEY_PREFIX.length);
    return agentType && !agentType.includes(".") ? { kind: "agent", agentType } : { kind: "unknown" };
  }
  if (key.startsWith(INSTANCE_KEY_PREFIX)) {
    const rest = key.slice(INSTANCE_KEY_PREFIX.length).split(".");
    if (rest.length === 2 && rest[0] && rest[1]) return { kind: "instance", agentType: rest[0], instanceId: rest[1] };
    return { kind: "unknown" };
  }
  if (key.startsWith(RESERVED_KEY_PREFIX)) return { kind: "reserved", name: key.slice(RESERVED_KEY_PREFIX.length) };
  return { kind: "unknown" };
}

/** `agents.<agent_type>`: the spec every instance of the type shares. */
export type AgentRecord = {
  readonly kind: "agent";
  readonly spec: AgentSpec;
  readonly registered_at: number;
  readonly updated_at: number;
  /** Loaded from a registry file: its instance never expires. */
  readonly static?: boolean;
};

export const RemovalReason = { Graceful: "graceful", Evicted: "evicted", Operator: "operator" } as const;
export type RemovalReason = (typeof RemovalReason)[keyof typeof RemovalReason];

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

/**
 * A live instance record built field by field in one order, never by spreading another
 * object: every heartbeat makes one, and objects of a single shape are what V8 serializes
 * and stores fastest (a spread copy of a rest object was 7% of the heartbeat's allocations).
 */
export function liveInstanceRecord(r: Omit<LiveInstanceRecord, "kind">): LiveInstanceRecord {
  return {
    kind: "instance",
    version: r.version,
    status: r.status,
    registered_at: r.registered_at,
    last_heartbeat: r.last_heartbeat,
    heartbeat_interval_ms: r.heartbeat_interval_ms,
    active_tasks: r.active_tasks,
    metadata: r.metadata,
    spec_changed: r.spec_changed,
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeRecord = (record: AgentRecord | InstanceRecord): Uint8Array => encoder.encode(JSON.stringify(record));

export function decodeAgentRecord(bytes: Uint8Array): AgentRecord | null {
  const v = decodeJson(bytes);
  return v && v["kind"] === "agent" && typeof v["spec"] === "object" && typeof v["registered_at"] === "number"
    ? (v as unknown as AgentRecord)
    : null;
}

export function decodeInstanceRecord(bytes: Uint8Array): InstanceRecord | null {
  const v = decodeJson(bytes);
  if (!v) return null;
  if (v["kind"] === "instance" && typeof v["last_heartbeat"] === "number" && typeof v["heartbeat_interval_ms"] === "number")
    return v as unknown as LiveInstanceRecord;
  if (v["kind"] === "gone" && typeof v["at"] === "number") return v as unknown as GoneInstanceRecord;
  return null;
}

function decodeJson(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(decoder.decode(bytes));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
