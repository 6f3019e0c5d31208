/**
 * How agents look on the wire (PROTOCOL.md section 2): AgentView, lookup providers and the
 * capability projection. Times become ISO 8601 strings here and nowhere else.
 */
import type { AgentState, InstanceState } from "../model/model.js";
import type { AgentSpec, Capability } from "../spec/spec.js";
import type { AgentView, ApprovalView, CapabilityView, DeprecationView, InstanceView, TrustView } from "../../protocol/messages.js";
import type { Approval } from "../trust/approval-policy.js";
import type { Deprecation } from "../trust/deprecation.js";
import type { ToolAnnotations } from "../../protocol/spec.js";
import { effectiveAnnotations } from "../interop/mcp/tool.js";
import { encodeCursor, indexAfter, jsonBytes, takePage } from "./page.js";

export type { AgentView, CapabilityView, InstanceView };

/** A capability as replies show it: as stored, with the annotations MCP clients act on beside its own. */
export const capabilityView = (cap: Capability): CapabilityView => ({ ...cap, effective_annotations: effectiveAnnotations(cap.annotations) });

const iso = (ms: number): string => new Date(ms).toISOString();

export function instanceView(i: InstanceState): InstanceView {
  return {
    instance_id: i.instance_id,
    version: i.version,
    status: i.status,
    registered_at: iso(i.registered_at),
    last_heartbeat: iso(i.last_heartbeat),
    heartbeat_interval_ms: i.heartbeat_interval_ms,
    active_tasks: i.active_tasks,
    metadata: { ...i.metadata },
  };
}

/** Which instances an agent view carries: those after `after` (an instance id), within the bounds. */
export type InstancePage = { readonly maxBytes: number; readonly limit?: number; readonly after?: string };

/**
 * The AgentView of an agent. With `page`, its instances (ordered by instance_id) are cut to fit
 * `maxBytes` of JSON for the whole view and `limit` instances, and `instances_next_cursor`
 * names where the rest start: one agent type with 8,000 instances made every `get`, `list`
 * and `find` reply larger than NATS max_payload. Without `page`, every instance is there.
 */
export function agentView(a: AgentState, page?: InstancePage): AgentView {
  let last = -1;
  const sorted: InstanceState[] = [];
  for (const i of a.instances.values()) {
    if (i.last_heartbeat > last) last = i.last_heartbeat;
    sorted.push(i);
  }
  sorted.sort((x, y) => (x.instance_id < y.instance_id ? -1 : 1));
  const view: AgentView = {
    ...a.spec,
    capabilities: a.spec.capabilities.map(capabilityView),
    status: a.status,
    registered_at: iso(a.registered_at),
    updated_at: iso(a.updated_at ?? a.registered_at),
    last_heartbeat: last >= 0 ? iso(last) : null,
    deregistered_at: a.deregistered_at === null ? null : iso(a.deregistered_at),
    revision: a.revision,
    instance_count: sorted.length,
    instances: [],
    instances_next_cursor: null,
    trust: trustView(a),
  };
  if (a.approval !== undefined) view.approval = approvalView(a.approval);
  if (a.deprecation !== undefined) view.deprecated = deprecationView(a.deprecation);
  if (!page) {
    view.instances = sorted.map(instanceView);
    return view;
  }
  const ids = sorted.map((i) => i.instance_id);
  const from = page.after === undefined ? 0 : indexAfter(ids, page.after);
  const taken = takePage(sorted.slice(from), (i) => i.instance_id, instanceView, {
    limit: page.limit ?? Number.POSITIVE_INFINITY,
    maxBytes: page.maxBytes - jsonBytes(view),
  });
  view.instances = taken.items;
  view.instances_next_cursor = taken.next_cursor === null ? null : encodeCursor(taken.next_cursor);
  return view;
}

/** v1.2: a stored spec's approval as get, list and pending show it (absent under auto). */
export function approvalView(a: Approval): ApprovalView {
  return {
    state: a.state,
    ...(a.by !== undefined ? { by: a.by } : {}),
    ...(a.at !== undefined ? { at: iso(a.at) } : {}),
    ...(a.reason !== undefined ? { reason: a.reason } : {}),
  };
}

/** v1.2: an operator's deprecation as every reply that shows the agent type carries it (absent when not deprecated). */
export function deprecationView(d: Deprecation): DeprecationView {
  return {
    by: d.by,
    at: iso(d.at),
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
    ...(d.successor !== undefined ? { successor: d.successor } : {}),
  };
}

/** The `deprecated` member of a compact reply entry (lookup, route, search, discover): spread it in. */
export const deprecatedMark = (a: { readonly deprecation?: Deprecation | undefined }): { deprecated?: DeprecationView } =>
  a.deprecation === undefined ? {} : { deprecated: deprecationView(a.deprecation) };

/** Search results (or any entries naming an agent type) with the `deprecated` mark of each type that has one. */
export function withDeprecatedMarks<T extends { agent_type: string }>(items: T[], get: (agentType: string) => { readonly deprecation?: Deprecation | undefined } | undefined): T[] {
  return items.map((r) => {
    const a = get(r.agent_type);
    return a?.deprecation === undefined ? r : { ...r, ...deprecatedMark(a) };
  });
}

/** v1.2: how the stored spec was verified, as get, list and find show it. */
export function trustView(a: AgentState): TrustView {
  const t = a.trust;
  if (t !== undefined) return { verified: true, kid: t.kid, publisher: t.publisher, verified_at: iso(t.verified_at) };
  const l = a.trust_lapse;
  return l === undefined ? { verified: false } : { verified: false, lapse: { state: l.state, reason: l.reason, kid: l.kid, at: iso(l.at) } };
}

export function readyInstances(a: AgentState): number {
  let n = 0;
  for (const i of a.instances.values()) if (i.status === "ready") n++;
  return n;
}

export type LookupProvider = {
  agent_type: string;
  kind: AgentSpec["kind"];
  version: string;
  nats_subject: string;
  consumer_group: string;
  description: string;
  input_schema: Capability["input_schema"];
  output_schema: Capability["output_schema"];
  confidence_hint: number | null;
  effective_annotations: ToolAnnotations;
  status: string;
  ready_instances: number;
  tenant_scope: string | null;
  /** v1.2: whether the stored spec was verified against its tenant's trust roots. */
  verified: boolean;
  /** v1.2: the operator's deprecation of the agent type, when there is one. */
  deprecated?: DeprecationView;
};

export function lookupProvider(a: AgentState, cap: Capability): LookupProvider {
  return {
    agent_type: a.agent_type,
    kind: a.spec.kind,
    version: a.spec.version,
    nats_subject: a.spec.nats_subject,
    consumer_group: a.spec.consumer_group,
    description: cap.description,
    input_schema: cap.input_schema,
    output_schema: cap.output_schema,
    confidence_hint: cap.confidence_hint ?? null,
    effective_annotations: effectiveAnnotations(cap.annotations),
    status: a.status,
    ready_instances: readyInstances(a),
    tenant_scope: a.spec.tenant_scope,
    verified: a.trust !== undefined,
    ...deprecatedMark(a),
  };
}

/**
 * Lookup order (PROTOCOL.md): confidence_hint desc (missing = 0), weight desc, then (v1.2) an
 * agent type that is not deprecated before one that is, then registration order (registered_at,
 * then agent_type so equal stamps stay stable).
 */
export function compareProviders(x: { agent: AgentState; cap: Capability }, y: { agent: AgentState; cap: Capability }): number {
  return (
    (y.cap.confidence_hint ?? 0) - (x.cap.confidence_hint ?? 0) ||
    y.agent.spec.weight - x.agent.spec.weight ||
    Number(x.agent.deprecation !== undefined) - Number(y.agent.deprecation !== undefined) ||
    x.agent.registered_at - y.agent.registered_at ||
    (x.agent.agent_type < y.agent.agent_type ? -1 : x.agent.agent_type > y.agent.agent_type ? 1 : 0)
  );
}
