/**
 * What an event says, in a few words, for the page's event lines (event-line.ts). One entry per
 * event type of the protocol, so a type added there does not compile until it has its words;
 * no DOM here, so the unit tests check every type.
 */
import { EventType } from "../../protocol/events.js";

type Fields = Record<string, unknown>;

/** A field as text; "" when absent (the data is whatever the stream held, so nothing is assumed). */
const v = (d: Fields, k: string): string => (d[k] === undefined || d[k] === null ? "" : String(d[k]));
const names = (d: Fields, k: string): string => (Array.isArray(d[k]) && d[k].length > 0 ? (d[k] as unknown[]).join(", ") : "none");
const words = (s: string): string => s.replace(/_/g, " ");
/** The agent types a dependency resolves to, as the registry's dependency warnings name them. */
const providedBy = (d: Fields): string => (Array.isArray(d["providers"]) && d["providers"].length > 0 ? ` (provided by ${names(d, "providers")})` : "");

const DETAIL: Record<EventType, (d: Fields) => string> = {
  [EventType.AgentRegistered]: (d) => `${v(d, "instance_id")} v${v(d, "version")}${d["first_instance"] ? ", first instance" : ""}${d["spec_changed"] ? ", spec changed" : ""}`,
  [EventType.AgentDeregistered]: (d) => `${v(d, "instance_id")} ${v(d, "reason")}${d["agent_removed"] ? ", agent type gone" : ""}`,
  [EventType.AgentStatusChanged]: (d) => `${v(d, "instance_id")} ${v(d, "from")} → ${v(d, "to")}`,
  [EventType.CapabilityChanged]: (d) => `${v(d, "change")}, providers: ${names(d, "providers")}`,
  [EventType.DependencyLost]: (d) => `lost ${v(d, "node")}: ${words(v(d, "state"))}${providedBy(d)}`,
  [EventType.DependencyRestored]: (d) => `${v(d, "node")} is ${words(v(d, "state"))} again${providedBy(d)}`,
  [EventType.AgentPending]: (d) => `v${v(d, "version")} waits for an operator's approval`,
  [EventType.AgentApproved]: (d) => `v${v(d, "version")} approved${d["by"] ? ` by ${v(d, "by")}` : ""}`,
  [EventType.AgentRejected]: (d) => `v${v(d, "version")} rejected${d["by"] ? ` by ${v(d, "by")}` : ""}${d["reason"] ? `: ${v(d, "reason")}` : ""}`,
  [EventType.AgentTrustChanged]: (d) => `v${v(d, "version")} ${v(d, "previous_state")} -> ${v(d, "state")} (${v(d, "reason")}${d["kid"] ? `, key ${v(d, "kid")}` : ""})`,
  [EventType.TrustRootsChanged]: (d) =>
    `${d["change"] === "deleted" ? "trust roots deleted from the bucket" : `trust roots set: mode ${v(d, "mode")}, approval ${v(d, "approval")}, keys ${names(d, "kids")}`}${d["by"] ? ` by ${v(d, "by")}` : ""}`,
  [EventType.AgentDeprecated]: (d) => `v${v(d, "version")} deprecated by ${v(d, "by")}${d["reason"] ? `: ${v(d, "reason")}` : ""}${d["successor"] ? `; use ${v(d, "successor")}` : ""}`,
  [EventType.AgentUndeprecated]: (d) => `v${v(d, "version")} no longer deprecated (by ${v(d, "by")}${d["reason"] ? `: ${v(d, "reason")}` : ""})`,
  [EventType.AgentHeartbeat]: (d) => `${v(d, "instance_id")} ${v(d, "status")}, ${v(d, "active_tasks") || "unknown"} active tasks`,
  [EventType.SelfPreservationAlert]: (d) =>
    `${d["active"] ? "evictions paused" : "evictions resumed"}: ${v(d, "overdue")} of ${v(d, "live")} live instances overdue (share ${v(d, "ratio")}, threshold ${v(d, "threshold")})`,
  [EventType.AuditGapAlert]: (d) => `${v(d, "missing")} events of ${v(d, "stream")} never mirrored (#${v(d, "first_seq")} to #${v(d, "last_seq")})`,
};

/** Fields named by the line's other parts (the subject) or of no use to a reader. */
const SKIPPED = new Set(["agent_type", "revision"]);
const MAX_FIELDS = 8;
const MAX_VALUE_CHARS = 80;

/** A value as words: scalars as they are, a list by its items (or how many), an object by how many fields it has. */
function valueWords(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.every((x) => typeof x !== "object" || x === null) ? value.slice(0, 5).map(String).join(", ") + (value.length > 5 ? `, … (${value.length})` : "") : `${value.length} items`;
  if (typeof value === "object") return `${Object.keys(value).length} fields`;
  const text = String(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/**
 * An event of a type this page does not know (a newer registry's, an approval, another
 * publisher's alert): its fields as "name value" pairs in words, never its JSON.
 */
export function fieldWords(data: Fields, limit = MAX_FIELDS): string {
  const entries = Object.entries(data).filter(([k]) => !SKIPPED.has(k));
  if (entries.length === 0) return "(no details)";
  const shown = entries.slice(0, limit).map(([k, v]) => `${words(k)} ${valueWords(v)}`);
  return shown.join(", ") + (entries.length > limit ? `, and ${entries.length - limit} more fields` : "");
}

/**
 * The fields worth a glance; an event of a type the protocol does not name shows its fields in
 * words (fieldWords). A history page leaves out the data of an event too large for it (`data_omitted`).
 */
export function eventDetail(e: { type: string; data?: unknown }): string {
  if (typeof e.data !== "object" || e.data === null || Array.isArray(e.data)) return "(no data)";
  return Object.hasOwn(DETAIL, e.type) ? DETAIL[e.type as EventType](e.data as Fields) : fieldWords(e.data as Fields);
}
