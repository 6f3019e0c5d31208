/**
 * What the registry stores in its KV bucket (PROTOCOL.md section 6), key layout and the
 * record shapes. Only the registry writes these, yet a record is read as untrusted input: its
 * shape is checked field by field (record-shapes.ts), and one that does not fit is skipped and
 * reported, never cast into the view (issue 14).
 */
import type { InstanceState } from "./model.js";
import type { AgentRecord, InstanceRecord, LiveInstanceRecord } from "./record-types.js";
import { RemovalReason } from "../../protocol/states.js";
import { SCHEMA_NAME_RE, SCHEMA_VERSION_RE } from "../../protocol/ids.js";
import { checkAgentRecord, checkGoneInstance, checkLiveInstance } from "./record-shapes.js";
import { isObject } from "./shape.js";

export const AGENT_KEY_PREFIX = "agents.";
export const INSTANCE_KEY_PREFIX = "instances.";
/** `schemas.<name>.<version>`: one version of a named schema (PROTOCOL.md section 11.1). */
export const SCHEMA_KEY_PREFIX = "schemas.";
/** Reserved prefix for the registry's own coordination keys (lease, canary). */
export const RESERVED_KEY_PREFIX = "_registry.";
export const LEASE_KEY = `${RESERVED_KEY_PREFIX}evictor`;

export const agentKey = (agentType: string): string => `${AGENT_KEY_PREFIX}${agentType}`;
export const instanceKey = (agentType: string, instanceId: string): string =>
  `${INSTANCE_KEY_PREFIX}${agentType}.${instanceId}`;

export const schemaKey = (name: string, version: string): string => `${SCHEMA_KEY_PREFIX}${name}.${version}`;

export type ParsedKey =
  | { kind: "agent"; agentType: string }
  | { kind: "schema"; name: string; version: string }
  | { kind: "instance"; agentType: string; instanceId: string }
  | { kind: "reserved"; name: string }
  | { kind: "unknown" };

export function parseKey(key: string): ParsedKey {
  if (key.startsWith(AGENT_KEY_PREFIX)) {
    const agentType = key.slice(AGENT_KEY_PREFIX.length);
    return agentType && !agentType.includes(".") ? { kind: "agent", agentType } : { kind: "unknown" };
  }
  if (key.startsWith(INSTANCE_KEY_PREFIX)) {
    // Two cuts at the dots rather than a split: a million of these in a cold start.
    const from = INSTANCE_KEY_PREFIX.length;
    const dot = key.indexOf(".", from);
    if (dot <= from || dot === key.length - 1 || key.indexOf(".", dot + 1) !== -1) return { kind: "unknown" };
    return { kind: "instance", agentType: key.slice(from, dot), instanceId: key.slice(dot + 1) };
  }
  if (key.startsWith(SCHEMA_KEY_PREFIX)) {
    // The name has no dot; the version may (1.0.0-rc.1): the first dot splits them.
    const rest = key.slice(SCHEMA_KEY_PREFIX.length);
    const dot = rest.indexOf(".");
    const name = rest.slice(0, dot);
    const version = rest.slice(dot + 1);
    return dot > 0 && SCHEMA_NAME_RE.test(name) && SCHEMA_VERSION_RE.test(version) ? { kind: "schema", name, version } : { kind: "unknown" };
  }
  if (key.startsWith(RESERVED_KEY_PREFIX)) return { kind: "reserved", name: key.slice(RESERVED_KEY_PREFIX.length) };
  return { kind: "unknown" };
}

export { RemovalReason };
export type { AgentRecord, GoneInstanceRecord, InstanceRecord, LiveInstanceRecord } from "./record-types.js";

/**
 * A live instance record built field by field in one order, never by spreading another
 * object (`replaced`, a register's flag, is left out): every heartbeat makes one, and objects of a single shape are what V8 serializes
 * and stores fastest (a spread copy of a rest object was 7% of the heartbeat's allocations).
 */
export function liveInstanceRecord(r: Omit<LiveInstanceRecord, "kind" | "replaced" | "suspect_since">): LiveInstanceRecord {
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

/** The live record of an instance as a view holds it (no register flags, no mark). */
export function recordOfInstance(i: InstanceState): LiveInstanceRecord {
  return liveInstanceRecord({
    version: i.version,
    status: i.status,
    registered_at: i.registered_at,
    last_heartbeat: i.last_heartbeat,
    heartbeat_interval_ms: i.heartbeat_interval_ms,
    active_tasks: i.active_tasks,
    metadata: i.metadata,
    spec_changed: false,
  });
}

/** The record the evictor writes to mark an instance suspect: what its view holds, plus the mark. */
export function markedInstanceRecord(i: InstanceState, at: number): LiveInstanceRecord {
  return { ...recordOfInstance(i), suspect_since: at };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeRecord = (record: AgentRecord | InstanceRecord): Uint8Array => encoder.encode(JSON.stringify(record));

/**
 * The agent record of `agents.<agentType>`, or what is wrong with it: bytes that are not JSON,
 * another shape (record-shapes.ts), or a spec that names another agent type than its key.
 */
export function readAgentRecord(bytes: Uint8Array, agentType?: string): AgentRecord | string {
  const v = decodeJson(bytes);
  if (typeof v === "string") return v;
  // Records written before PROTOCOL.md v1.1 have no `kind`: they are agents.
  const spec = v["spec"];
  if (isObject(spec) && spec["kind"] === undefined) spec["kind"] = "agent";
  const problem = checkAgentRecord(v);
  if (problem !== undefined) return problem;
  const record = v as unknown as AgentRecord;
  if (agentType !== undefined && record.spec.agent_type !== agentType) return "spec.agent_type: not the agent type of its key";
  return record;
}

/** The live or gone record of `instances.<agentType>.<instanceId>`, or what is wrong with it. */
export function readInstanceRecord(bytes: Uint8Array): InstanceRecord | string {
  const v = decodeJson(bytes);
  if (typeof v === "string") return v;
  const problem = v["kind"] === "gone" ? checkGoneInstance(v) : v["kind"] === "instance" ? checkLiveInstance(v) : "kind: neither instance nor gone";
  return problem ?? (v as unknown as InstanceRecord);
}

export function decodeAgentRecord(bytes: Uint8Array, agentType?: string): AgentRecord | null {
  const r = readAgentRecord(bytes, agentType);
  return typeof r === "string" ? null : r;
}

export function decodeInstanceRecord(bytes: Uint8Array): InstanceRecord | null {
  const r = readInstanceRecord(bytes);
  return typeof r === "string" ? null : r;
}

function decodeJson(bytes: Uint8Array): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(bytes));
  } catch {
    return "not JSON";
  }
  return isObject(v) ? v : "not a JSON object";
}
