/**
 * Store entries as the view receives them from the bucket's change log, for unit tests that
 * drive a RegistryView: an agent record, a live instance, a tombstone, a delete.
 */
import type { StoreEntry } from "../../src/domain/ports.js";
import type { AgentSpec } from "../../src/domain/spec/spec.js";
import {
  agentKey,
  encodeRecord,
  instanceKey,
  type AgentRecord,
  type LiveInstanceRecord,
  type RemovalReason,
} from "../../src/domain/model/records.js";

export const put = (key: string, revision: number, value: Uint8Array): StoreEntry => ({ key, revision, operation: "PUT", value, created: revision * 1000 });

export const agentPut = (rev: number, spec: AgentSpec, rec: Partial<AgentRecord> = {}): StoreEntry =>
  put(agentKey(spec.agent_type), rev, encodeRecord({ kind: "agent", spec, registered_at: 10, updated_at: 10, ...rec }));

export const LIVE: LiveInstanceRecord = {
  kind: "instance", version: "1.0.0", status: "ready", registered_at: 100, last_heartbeat: 100,
  heartbeat_interval_ms: 1000, active_tasks: 0, metadata: {}, spec_changed: false,
};
export const instPut = (rev: number, type: string, id: string, rec: Partial<LiveInstanceRecord> = {}): StoreEntry =>
  put(instanceKey(type, id), rev, encodeRecord({ ...LIVE, ...rec }));

export const gonePut = (rev: number, type: string, id: string, reason: RemovalReason, at: number): StoreEntry =>
  put(instanceKey(type, id), rev, encodeRecord({ kind: "gone", version: "1.0.0", reason, at, registered_at: 100, last_heartbeat: 200 }));

export const del = (key: string, rev: number): StoreEntry => ({ key, revision: rev, operation: "DEL", value: new Uint8Array(), created: rev * 1000 });

