/**
 * What registration checks of a spec's `depends` (PROTOCOL.md section 11.2): a dependency that
 * closes a cycle through the fleet is refused, naming the cycle; one that is missing or not
 * live is allowed and reported as a warning (agents often start before what they need).
 */
import type { Dependency } from "../../protocol/spec.js";
import type { AgentSpec } from "../spec/spec.js";
import { AgentStatus, type AgentState } from "../view/model.js";
import { dependencyNodeId, namedProviders, resolveDependency, type FleetReader } from "./resolution.js";

/** Agent types a cycle search visits at most; a fleet deeper than this is not searched further. */
export const MAX_CYCLE_SEARCH = 100_000;

export type DependencyCycle = {
  /** Position in `depends` of the dependency that starts the cycle. */
  index: number;
  /** Agent types along the cycle, starting and ending with the registering one. */
  path: string[];
};

/**
 * The first cycle that registering `spec` would close, or null. The fleet is read as if the
 * spec were stored already (so a dependency naming the agent itself, or one whose chain comes
 * back to it, is found on a first registration too). Other agent types' edges are their
 * stored specs' dependencies, resolved by name as the graph resolves them, whatever their
 * state: a cycle through a stopped agent is still one.
 */
export function findCycle(stored: FleetReader, spec: AgentSpec): DependencyCycle | null {
  const agentType = spec.agent_type;
  const depends = spec.depends ?? [];
  const tenant = spec.tenant_scope;
  const fleet = withSpec(stored, spec);
  const visited = new Set<string>();
  // Depth-first with an explicit stack: a fleet's chains may be longer than the call stack.
  for (let index = 0; index < depends.length; index++) {
    const stack: { type: string; path: string[] }[] = namedProviders(fleet, depends[index]!, tenant).types.map((t) => ({ type: t, path: [agentType, t] }));
    while (stack.length > 0) {
      const { type, path } = stack.pop()!;
      if (type === agentType) return { index, path };
      if (visited.has(type) || visited.size >= MAX_CYCLE_SEARCH) continue;
      visited.add(type);
      const agent = fleet.get(type);
      for (const dep of agent?.spec.depends ?? []) {
        for (const next of namedProviders(fleet, dep, agent!.spec.tenant_scope).types) stack.push({ type: next, path: [...path, next] });
      }
    }
  }
  return null;
}

/** The fleet as if `spec` were stored, with no live instance. */
function withSpec(fleet: FleetReader, spec: AgentSpec): FleetReader {
  const existing = fleet.get(spec.agent_type);
  const standIn: AgentState = existing
    ? { ...existing, spec }
    : { agent_type: spec.agent_type, spec, registered_at: 0, revision: 0, instances: new Map(), status: AgentStatus.Deregistered, deregistered_at: null };
  const provides = new Set(spec.capabilities.map((c) => c.name));
  return {
    get: (t) => (t === spec.agent_type ? standIn : fleet.get(t)),
    providersOf: (capability) => {
      const found = fleet.providersOf(capability);
      if (provides.has(capability) === found.has(spec.agent_type)) return found;
      const out = new Set(found);
      if (provides.has(capability)) out.add(spec.agent_type);
      else out.delete(spec.agent_type);
      return out;
    },
  };
}

/** A warning for each dependency that is not live now: `depends.0: agent:summarizer@2.0.0 is missing`. */
export function dependencyWarnings(fleet: FleetReader, depends: readonly Dependency[], tenant: string | null): string[] {
  const out: string[] = [];
  depends.forEach((dep, i) => {
    const { state, providers } = resolveDependency(fleet, dep, tenant);
    if (state === "live") return;
    const by = providers.length > 0 ? ` (${providers.join(", ")})` : "";
    out.push(`depends.${i}: ${dependencyNodeId(dep)} is ${state.replace("_", " ")}${by}`);
  });
  return out;
}
