/**
 * A stored stream message as a row of `audit_events`: the typed columns the history queries
 * filter on, and the CloudEvent itself for JSONB. Pure: the caller passes the tenant book that
 * remembers which tenant each agent type belongs to (only `registered` events name it).
 *
 * PostgreSQL's JSONB refuses U+0000 in strings (text cannot hold it), although JSON allows it;
 * an event carrying it is stored with every U+0000 removed from its strings and keys, and the
 * row says so (`nul_stripped`), rather than failing the batch and stopping the mirror forever.
 */
import { EventType, eventKey } from "../protocol/events.js";

/** Events of no tenant (shared agents, fleet alerts) are null; this marks events no tenant view may see. */
export const HIDDEN_TENANT = "*";

export type EventRow = {
  seq: number;
  eventId: string | null;
  type: string | null;
  subject: string | null;
  agentType: string | null;
  capability: string | null;
  tenant: string | null;
  time: Date | null;
  /** The CloudEvent as JSON text, without U+0000. */
  eventJson: string;
  nulStripped: boolean;
};

/**
 * Which tenant each agent type and capability belongs to, as far as the mirrored events tell.
 * Loaded from the database at start and updated as rows are built.
 */
export class TenantBook {
  readonly agents = new Map<string, string | null>();
  readonly capabilities = new Map<string, string | null>();

  /** The tenant of an agent type whose registration the mirror never saw is unknown: hidden. */
  agentTenant(agentType: string): string | null {
    const t = this.agents.get(agentType);
    return t === undefined ? HIDDEN_TENANT : t;
  }
}

const stripNul = (s: string): string => (s.includes("\u0000") ? s.replaceAll("\u0000", "") : s);

/** The agent events whose data names the agent type's tenant (`tenant_scope`). */
const TENANT_NAMING: ReadonlySet<string> = new Set([
  EventType.AgentRegistered,
  EventType.AgentPending,
  EventType.AgentApproved,
  EventType.AgentRejected,
  EventType.AgentTrustChanged,
  EventType.AgentDeprecated,
  EventType.AgentUndeprecated,
]);

/** A copy of `value` without U+0000 in any string or key; `stripped` says whether one was found. */
export function withoutNul(value: unknown): { value: unknown; stripped: boolean } {
  let stripped = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      const s = stripNul(v);
      if (s !== v) stripped = true;
      return s;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) {
        const key = stripNul(k);
        if (key !== k) stripped = true;
        out[key] = walk(inner);
      }
      return out;
    }
    return v;
  };
  return { value: walk(value), stripped };
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** A capability event's tenant: its providers' if they share one (shared providers count as any), hidden if they are of several. */
function capabilityTenant(providers: unknown, book: TenantBook, capability: string): string | null {
  if (!Array.isArray(providers) || providers.length === 0) return book.capabilities.get(capability) ?? null;
  const tenants = new Set(providers.map((p) => (typeof p === "string" ? book.agentTenant(p) : HIDDEN_TENANT)).filter((t) => t !== null));
  if (tenants.size === 0) return null;
  if (tenants.size === 1) return [...tenants][0]!;
  return HIDDEN_TENANT;
}

export function toRow(seq: number, text: string, book: TenantBook): EventRow {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    // Not a CloudEvent (the stream may be shared): kept, so the rows still match the stream one to one.
    const { value, stripped } = withoutNul({ unparsed: text });
    return { seq, eventId: null, type: null, subject: null, agentType: null, capability: null, tenant: HIDDEN_TENANT, time: null, eventJson: JSON.stringify(value), nulStripped: stripped };
  }
  const { value, stripped } = withoutNul(parsed);
  const e = value as Record<string, unknown>;
  const type = str(e["type"]);
  const subject = str(e["subject"]);
  const data = (e["data"] !== null && typeof e["data"] === "object" ? e["data"] : {}) as Record<string, unknown>;
  const timeText = str(e["time"]);
  const time = timeText !== null && !Number.isNaN(Date.parse(timeText)) ? new Date(timeText) : null;
  let agentType: string | null = null;
  let capability: string | null = null;
  let tenant: string | null = null;
  if (type !== null && type.startsWith("registry.agent.") && subject !== null) {
    agentType = subject;
    // registered events name the tenant, and so do the approval gate's and the deprecations (v1.2), which may come first.
    if (TENANT_NAMING.has(type)) {
      const scope = data["tenant_scope"];
      book.agents.set(subject, typeof scope === "string" ? scope : null);
    }
    tenant = book.agentTenant(subject);
  } else if (type === EventType.CapabilityChanged && subject !== null) {
    capability = subject;
    tenant = capabilityTenant(data["providers"], book, subject);
    book.capabilities.set(subject, tenant);
  } else if (type === null || !type.startsWith("registry.alert.")) {
    // Alerts are about the fleet and shared; anything else is not an event of ours, or (a
    // tenant's trust roots changed in the bucket, v1.2) the operators' own: mirrored, and
    // read back only by a history that is not a tenant's.
    tenant = HIDDEN_TENANT;
  }
  // Keyed by region and id (regional mode): each region's ids start at 1, and a global stream holds them all.
  const id = str(e["id"]);
  const eventId = id === null ? null : eventKey({ id, region: str(e["region"]) ?? undefined });
  return { seq, eventId, type, subject, agentType, capability, tenant, time, eventJson: JSON.stringify(e), nulStripped: stripped };
}
