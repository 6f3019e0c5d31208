/**
 * How two AgentSpecs of one (agent_type, version) differ (PROTOCOL.md section 9): the top-level
 * fields whose values differ and, for `capabilities`, which capability names changed, were
 * added or were removed. Both sides are parsed specs (defaults applied, registry-managed fields
 * dropped), so what is left to compare is content: key order and keys holding `undefined` do
 * not count, as a record stored by an older registry may order its keys otherwise (the `kind`
 * its reader fills in comes last) while meaning the same spec.
 */
import type { AgentSpec, Capability } from "./spec.js";

export type CapabilityDiff = {
  readonly changed: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** The same capabilities in another order (lookup and export show them in spec order). */
  readonly reordered: boolean;
};

export type SpecDiff = {
  /** Top-level fields that differ, in the order the stored spec has them, then new ones. */
  readonly fields: readonly string[];
  /** Set when `capabilities` is among the fields. */
  readonly capabilities: CapabilityDiff | null;
};

/** What differs from `stored` to `next`; `fields` is empty when they are the same spec. */
export function specDiff(stored: AgentSpec, next: AgentSpec): SpecDiff {
  const a = stored as unknown as Record<string, unknown>;
  const b = next as unknown as Record<string, unknown>;
  const fields: string[] = [];
  for (const key of unionKeys(a, b)) if (!sameJson(a[key], b[key])) fields.push(key);
  const capabilities = fields.includes("capabilities") ? capabilityDiff(stored.capabilities, next.capabilities) : null;
  return { fields, capabilities };
}

export function sameContent(a: AgentSpec, b: AgentSpec): boolean {
  return sameJson(a, b);
}

function capabilityDiff(stored: readonly Capability[], next: readonly Capability[]): CapabilityDiff {
  const before = new Map(stored.map((c) => [c.name, c]));
  const after = new Map(next.map((c) => [c.name, c]));
  const changed: string[] = [];
  const added: string[] = [];
  for (const c of next) {
    const old = before.get(c.name);
    if (old === undefined) added.push(c.name);
    else if (!sameJson(old, c)) changed.push(c.name);
  }
  const removed = stored.filter((c) => !after.has(c.name)).map((c) => c.name);
  const reordered = changed.length + added.length + removed.length === 0;
  return { changed, added, removed, reordered };
}

/** Most capability names a message lists per kind of change; the rest are counted. */
const NAMES_SHOWN = 5;
/** A message travels in the `Nats-Service-Error` header too: kept to one short line. */
export const MAX_DIFF_MESSAGE = 1024;

/** `description, capabilities (changed: a.b; added: c.d; removed: e.f and 2 more)`, at most MAX_DIFF_MESSAGE characters. */
export function describeDiff(diff: SpecDiff): string {
  const parts = diff.fields.map((field) => {
    const caps = field === "capabilities" ? diff.capabilities : null;
    if (!caps) return field;
    if (caps.reordered) return "capabilities (order)";
    const lists = (
      [
        ["changed", caps.changed],
        ["added", caps.added],
        ["removed", caps.removed],
      ] as const
    )
      .filter(([, names]) => names.length > 0)
      .map(([label, names]) => `${label}: ${nameList(names)}`);
    return `capabilities (${lists.join("; ")})`;
  });
  const text = parts.join(", ");
  return text.length <= MAX_DIFF_MESSAGE ? text : `${text.slice(0, MAX_DIFF_MESSAGE - 1)}…`;
}

function nameList(names: readonly string[]): string {
  // A capability name may be 256 characters: each is cut so a few of them stay readable.
  const shown = names.slice(0, NAMES_SHOWN).map((n) => (n.length > 64 ? `${n.slice(0, 63)}…` : n));
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
}

function unionKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = Object.keys(a);
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) keys.push(k);
  return keys;
}

/** Equality of JSON values as they would serialize: key order and `undefined` members ignored. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) defined--;
  return defined === 0;
}
