/**
 * The graph key `_registry.graph`: what makes a dependency cycle check and the spec write it
 * admits one step across replicas (docs/architecture.md, "Dependency cycles across replicas").
 * Each replica checks against its own view, which two registrations racing through one or two
 * replicas may both read before either write lands; so every write that can add an edge to
 * the dependency graph first writes this key with compare-and-set, and the check it makes is
 * against its view caught up to the key's revision plus the specs the key says are on their
 * way. This file is the record and its rules; service/registration/dependency-guard.ts does the I/O.
 *
 * The record lists intents: a spec about to be written, with the revision its write expects
 * the agent key to hold. An intent stays until the view shows that key moved off that
 * revision (the write landed, or another write makes it fail for good), or its author, whose
 * write did not land, withdraws it; until then every check counts its edges as stored.
 */
import type { Dependency } from "../../protocol/spec.js";
import type { AgentSpec } from "../spec/spec.js";
import { RESERVED_KEY_PREFIX } from "../model/records.js";
import type { PendingSpec } from "./dependency-checks.js";
import type { FleetReader } from "./resolution.js";

export const GRAPH_KEY = `${RESERVED_KEY_PREFIX}graph`;

/** Intents one record holds at most; past it (or past MAX_GRAPH_RECORD_BYTES) the oldest others are dropped. */
export const MAX_INTENTS = 256;
/** Bytes of JSON a record holds at most: half the default NATS max_payload. */
export const MAX_GRAPH_RECORD_BYTES = 512 * 1024;

export type GraphIntent = PendingSpec & {
  /** Its registration's own id: the registration's later attempts replace it, and a failed one withdraws it. */
  readonly id: string;
  /** The agent key's revision the spec write expects (0: absent). */
  readonly expected: number;
};

export type GraphRecord = { readonly kind: "graph"; readonly intents: readonly GraphIntent[] };

/** What of a spec can add an edge to the graph: its dependencies, its tenant, the capabilities a tool dependency may name. */
function facts(spec: AgentSpec): PendingSpec {
  return { agent_type: spec.agent_type, tenant_scope: spec.tenant_scope, capabilities: spec.capabilities.map((c) => c.name), depends: (spec.depends ?? []).map(dependencyOnly) };
}

const dependencyOnly = (d: Dependency): Dependency => ({ type: d.type, name: d.name, version: d.version, ...(d.capability !== undefined ? { capability: d.capability } : {}) });

/**
 * Whether writing `spec` over `stored` (undefined: no spec stored) can close a cycle, and so
 * must take its turn on the graph key. A spec with no dependencies cannot: a cycle through it
 * would need an edge out of it. Nor can one whose dependencies, tenant and capability names are
 * those of the stored spec it replaces: the graph's edges are the same before and after.
 */
export function changesGraph(spec: AgentSpec, stored: AgentSpec | undefined): boolean {
  if (!spec.depends?.length) return false;
  if (stored === undefined) return true;
  const a = facts(spec);
  const b = facts(stored);
  return a.tenant_scope !== b.tenant_scope || JSON.stringify(a.depends) !== JSON.stringify(b.depends) || JSON.stringify([...a.capabilities].sort()) !== JSON.stringify([...b.capabilities].sort());
}

export function intentOf(spec: AgentSpec, expected: number, id: string): GraphIntent {
  return { id, expected, ...facts(spec) };
}

/**
 * Whether the view shows the intent's write done or doomed: its agent key no longer holds the
 * revision the write expects. A view that has not applied the write yet keeps it pending.
 */
export function settled(intent: GraphIntent, fleet: Pick<FleetReader, "get">): boolean {
  return (fleet.get(intent.agent_type)?.revision ?? 0) !== intent.expected;
}

/**
 * The record to write: the intents still pending, without an earlier one of the same
 * registration, then `own`. Past the bounds the oldest others go first (`dropped` counts them):
 * pending intents are the writes in flight on each replica, a few at most, so only authors that
 * died between this key and their spec write can fill it.
 */
export function nextRecord(pending: readonly GraphIntent[], own: GraphIntent): { record: GraphRecord; dropped: number } {
  const kept = pending.filter((i) => i.id !== own.id);
  let dropped = 0;
  const size = (): number => encodeGraphRecord({ kind: "graph", intents: [...kept, own] }).length;
  while (kept.length > 0 && (kept.length + 1 > MAX_INTENTS || size() > MAX_GRAPH_RECORD_BYTES)) {
    kept.shift();
    dropped++;
  }
  return { record: { kind: "graph", intents: [...kept, own] }, dropped };
}

/** The record without the intent `id` (null: it holds no such intent). */
export function withoutIntent(record: GraphRecord, id: string): GraphRecord | null {
  if (!record.intents.some((i) => i.id === id)) return null;
  return { kind: "graph", intents: record.intents.filter((i) => i.id !== id) };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeGraphRecord = (record: GraphRecord): Uint8Array => encoder.encode(JSON.stringify(record));

/**
 * The record a stored value holds, as untrusted input: an intent that does not fit is left out
 * (only the registry writes the key, so none should); a value that is not a record reads as one
 * with no intent.
 */
export function decodeGraphRecord(bytes: Uint8Array): GraphRecord {
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(bytes));
  } catch {
    return { kind: "graph", intents: [] };
  }
  const intents = isRecord(v) && v["kind"] === "graph" && Array.isArray(v["intents"]) ? v["intents"] : [];
  return { kind: "graph", intents: intents.filter(isIntent) };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === "string";

function isIntent(v: unknown): v is GraphIntent {
  if (!isRecord(v)) return false;
  const { id, expected, agent_type, tenant_scope, capabilities, depends } = v;
  return (
    isString(id) &&
    typeof expected === "number" &&
    Number.isSafeInteger(expected) &&
    expected >= 0 &&
    isString(agent_type) &&
    (tenant_scope === null || isString(tenant_scope)) &&
    Array.isArray(capabilities) &&
    capabilities.every(isString) &&
    Array.isArray(depends) &&
    depends.every((d) => isRecord(d) && isString(d["type"]) && isString(d["name"]) && isString(d["version"]))
  );
}
