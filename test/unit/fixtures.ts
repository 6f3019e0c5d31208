/**
 * Builders of AgentSpec and AgentState values for the unit tests of the query core, so a
 * test states only what it is about and the rest takes valid defaults.
 */
import { readFileSync } from "node:fs";
import type { Store } from "../../src/domain/ports.js";
import type { RegistryView } from "../../src/domain/view/view.js";
import type { RegistrarSettings } from "../../src/service/registration/registrar.js";
import { AgentIndex } from "../../src/domain/query/agent-index.js";
import { AgentStatus, aggregateStatus } from "../../src/domain/model/model.js";
import type { AgentState, InstanceState } from "../../src/domain/model/model.js";
import { validateRegistryFile } from "../../src/domain/spec/registry-file.js";
import { agentSpecSchema } from "../../src/domain/spec/spec.js";
import type { AgentSpec, AgentSpecInput } from "../../src/domain/spec/spec.js";

export const EXAMPLE_REGISTRY_FILE = new URL("../../deploy/config/agent-registry.json", import.meta.url);

/** A valid AgentSpec; nats_subject and consumer_group follow agent_type unless overridden. */
export function makeSpec(overrides: Partial<AgentSpecInput> = {}): AgentSpec {
  const agentType = overrides.agent_type ?? "agent-a";
  return agentSpecSchema.parse({
    agent_type: agentType,
    version: "1.0.0",
    description: `The ${agentType} agent`,
    owner_team: "team-a",
    capabilities: [{ name: "cap.a", description: "does a", input_schema: {}, output_schema: {} }],
    nats_subject: `agent.tasks.${agentType}`,
    consumer_group: agentType,
    ...overrides,
  });
}

/** A register body's spec as a client sends it (not parsed): for tests of the write path. */
export function specBody(type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_type: type,
    version: "1.0.0",
    description: `${type} agent`,
    owner_team: "team",
    capabilities: [{ name: `${type}.run`, description: "runs", input_schema: {}, output_schema: {} }],
    nats_subject: `tasks.${type}`,
    consumer_group: type,
    ...extra,
  };
}

/** A capability input with empty schemas. */
export function cap(name: string, extra: { tags?: string[]; examples?: string[]; description?: string; annotations?: { readOnlyHint?: boolean } } = {}) {
  return { name, description: extra.description ?? name, input_schema: {}, output_schema: {}, ...extra };
}

export type AgentOptions = {
  /** Aggregate status; without `instances` it also gives the status of one instance (none when deregistered). */
  status?: AgentStatus;
  instances?: Partial<InstanceState>[];
  registered_at?: number;
  revision?: number;
};

export function makeAgent(spec: AgentSpec, opts: AgentOptions = {}): AgentState {
  const registeredAt = opts.registered_at ?? 1_000;
  const status = opts.status ?? AgentStatus.Ready;
  const partials =
    opts.instances ?? (status === AgentStatus.Deregistered ? [] : [{ status: status as InstanceState["status"] }]);
  const instances = new Map<string, InstanceState>();
  partials.forEach((p, i) => {
    const inst: InstanceState = {
      agent_type: spec.agent_type,
      instance_id: `i${i + 1}`,
      version: spec.version,
      status: "ready",
      registered_at: registeredAt,
      last_heartbeat: registeredAt,
      heartbeat_interval_ms: 30_000,
      active_tasks: 0,
      metadata: {},
      revision: 1,
      observed_at: registeredAt,
      ...p,
    };
    instances.set(inst.instance_id, inst);
  });
  const aggregate = opts.status ?? aggregateStatus(instances.values());
  return {
    agent_type: spec.agent_type,
    spec,
    registered_at: registeredAt,
    revision: opts.revision ?? 1,
    instances,
    status: aggregate,
    deregistered_at: aggregate === AgentStatus.Deregistered ? registeredAt + 1 : null,
  };
}

export function indexOf(agents: Iterable<AgentState>): AgentIndex {
  const index = new AgentIndex();
  for (const a of agents) index.update(a.agent_type, a);
  return index;
}

/** The specs of deploy/config/agent-registry.json, parsed with their defaults. */
export function exampleSpecs(): AgentSpec[] {
  const result = validateRegistryFile(JSON.parse(readFileSync(EXAMPLE_REGISTRY_FILE, "utf8")));
  if (!result.ok) throw new Error(`example registry file is invalid: ${result.errors.join("; ")}`);
  return result.specs.map((s) => agentSpecSchema.parse(s));
}

/** Registrar settings as the service's defaults have them, with `overrides`. */
export function registrarSettings(overrides: Partial<RegistrarSettings> = {}): RegistrarSettings {
  return {
    missedHeartbeats: 3,
    defaultHeartbeatIntervalMs: 30_000,
    minHeartbeatIntervalMs: 1000,
    maxHeartbeatIntervalMs: 3_600_000,
    duplicateCapabilities: "allow",
    heartbeatSubject: (t, i) => `registry.heartbeat.${t}.${i}`,
    prefix: "registry",
    bucketMaxBytes: 0,
    maxMetadataBytes: 16384,
    maxInstancesPerType: 100_000,
    maxTypesPerTenant: 100_000,
    ...overrides,
  };
}

/** Applies to `view` everything `store` holds beyond the view's revision, as the feed's watch would. */
export async function catchUp(store: Store, view: RegistryView): Promise<void> {
  const last = await store.lastRevision();
  if (view.revision >= last) return;
  const watch = await store.watch(view.revision);
  for await (const e of watch) {
    view.apply(e);
    if (e.revision >= last) break;
  }
  watch.stop();
}
