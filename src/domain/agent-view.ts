/**
 * How agents look on the wire (PROTOCOL.md section 2): AgentView, lookup providers and the
 * capability projection. Times become ISO 8601 strings here and nowhere else.
 */
import type { AgentState, AgentStatus, InstanceState, InstanceStatus } from "./model.js";
import type { AgentSpec, Capability } from "./spec.js";

export type InstanceView = {
  instance_id: string;
  version: string;
  status: InstanceStatus;
  registered_at: string;
  last_heartbeat: string;
  heartbeat_interval_ms: number;
  active_tasks: number;
  metadata: Record<string, string>;
};

export type AgentView = AgentSpec & {
  status: AgentStatus;
  registered_at: string;
  last_heartbeat: string | null;
  deregistered_at: string | null;
  revision: number;
  instances: InstanceView[];
};

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

export function agentView(a: AgentState): AgentView {
  let last = -1;
  const instances: InstanceView[] = [];
  for (const i of a.instances.values()) {
    if (i.last_heartbeat > last) last = i.last_heartbeat;
    instances.push(instanceView(i));
  }
  instances.sort((x, y) => (x.instance_id < y.instance_id ? -1 : 1));
  return {
    ...a.spec,
    status: a.status,
    registered_at: iso(a.registered_at),
    last_heartbeat: last >= 0 ? iso(last) : null,
    deregistered_at: a.deregistered_at === null ? null : iso(a.deregistered_at),
    revision: a.revision,
    instances,
  };
}

export function readyInstances(a: AgentState): number {
  let n = 0;
  for (const i of a.instances.values()) if (i.status === "ready") n++;
  return n;
}

export type LookupProvider = {
  agent_type: string;
  version: string;
  nats_subject: string;
  consumer_group: string;
  description: string;
  input_schema: Capability["input_schema"];
  output_schema: Capability["output_schema"];
  confidence_hint: number | null;
  status: string;
  ready_instances: number;
  tenant_scope: string | null;
};

export function lookupProvider(a: AgentState, cap: Capability): LookupProvider {
  return {
    agent_type: a.agent_type,
    version: a.spec.version,
    nats_subject: a.spec.nats_subject,
    consumer_group: a.spec.consumer_group,
    description: cap.description,
    input_schema: cap.input_schema,
    output_schema: cap.output_schema,
    confidence_hint: cap.confidence_hint ?? null,
    status: a.status,
    ready_instances: readyInstances(a),
    tenant_scope: a.spec.tenant_scope,
  };
}

/**
 * Lookup order (PROTOCOL.md): confidence_hint desc (missing = 0), weight desc, then
 * registration order (registered_at, then agent_type so equal stamps stay stable).
 */
export function compareProviders(x: { agent: AgentState; cap: Capability }, y: { agent: AgentState; cap: Capability }): number {
  return (
    (y.cap.confidence_hint ?? 0) - (x.cap.confidence_hint ?? 0) ||
    y.agent.spec.weight - x.agent.spec.weight ||
    x.agent.registered_at - y.agent.registered_at ||
    (x.agent.agent_type < y.agent.agent_type ? -1 : x.agent.agent_type > y.agent.agent_type ? 1 : 0)
  );
}
