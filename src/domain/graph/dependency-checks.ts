/**
 * What registration checks of a spec's `depends` (PROTOCOL.md section 11.2): a dependency that
 * closes a cycle through the fleet is refused, naming the cycle; one that is missing or not
 * live is allowed and reported as a warning (agents often start before what they need).
 */
import type { Dependency } from "../../protocol/spec.js";
import type { AgentSpec } from "../spec/spec.js";
import { AgentStatus, type AgentState } from "../model/model.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { invalidSpec, type RegistryError } from "../errors.js";
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
 * A spec whose write may land at any moment (graph-guard.ts), as much of it as can add an edge:
 * a cycle check counts its edges as stored, beside those of the spec the view holds for it.
 */
export type PendingSpec = {
  readonly agent_type: string;
  readonly tenant_scope: string | null;
  readonly capabilities: readonly string[];
  readonly depends: readonly Pick<Dependency, "type" | "name" | "version">[];
};

/** The edges a cycle search follows: what a dependency declared under `tenant` resolves to, and what an agent type declares. */
type Edges = {
  resolve(dep: Pick<Dependency, "type" | "name">, tenant: string | null): string[];
  declared(agentType: string): { tenant: string | null; depends: readonly Pick<Dependency, "type" | "name">[] }[];
};

/**
 * The first cycle that registering `spec` would close, or null. The fleet is read as if the
 * spec were stored already (so a dependency naming the agent itself, or one whose chain comes
 * back to it, is found on a first registration too). Other agent types' edges are their
 * stored specs' dependencies, resolved by name as the graph resolves them, whatever their
 * state: a cycle through a stopped agent is still one. With `pending` specs of other agent
 * types, each one's edges count as well as those of the spec stored for it, as whichever of
 * the two the store ends up holding (a search that may find a cycle only one of them closes).
 */
export function findCycle(stored: FleetReader, spec: AgentSpec, pending: readonly PendingSpec[] = []): DependencyCycle | null {
  const agentType = spec.agent_type;
  const depends = spec.depends ?? [];
  const tenant = spec.tenant_scope;
  const fleet = withSpec(stored, spec);
  const others = pending.filter((p) => p.agent_type !== agentType);
  const edges = others.length === 0 ? exactEdges(fleet) : edgesWithPending(fleet, others);
  const visited = new Set<string>();
  // Depth-first with an explicit stack: a fleet's chains may be longer than the call stack.
  for (let index = 0; index < depends.length; index++) {
    const stack: { type: string; path: string[] }[] = edges.resolve(depends[index]!, tenant).map((t) => ({ type: t, path: [agentType, t] }));
    while (stack.length > 0) {
      const { type, path } = stack.pop()!;
      if (type === agentType) return { index, path };
      if (visited.has(type) || visited.size >= MAX_CYCLE_SEARCH) continue;
      visited.add(type);
      for (const declared of edges.declared(type)) {
        for (const dep of declared.depends) for (const next of edges.resolve(dep, declared.tenant)) stack.push({ type: next, path: [...path, next] });
      }
    }
  }
  return null;
}

/** The graph's own edges (resolution.ts). */
function exactEdges(fleet: FleetReader): Edges {
  return {
    resolve: (dep, tenant) => namedProviders(fleet, dep, tenant).types,
    declared: (t) => {
      const agent = fleet.get(t);
      return agent ? [{ tenant: agent.spec.tenant_scope, depends: agent.spec.depends ?? [] }] : [];
    },
  };
}

/**
 * Every edge the graph may have once the pending specs land or fail: an agent type declares
 * what its stored spec and its pending ones do, is seen by whoever one of them lets see it,
 * provides what one of them provides; and a dependency naming an agent type that has a pending
 * spec resolves both ways resolution.ts could (that type, and the providers of a capability of
 * the name), as whether the type is seen may depend on which spec lands.
 */
function edgesWithPending(fleet: FleetReader, pending: readonly PendingSpec[]): Edges {
  const byType = new Map<string, PendingSpec[]>();
  for (const p of pending) (byType.get(p.agent_type) ?? byType.set(p.agent_type, []).get(p.agent_type)!).push(p);
  const scopes = (t: string): (string | null)[] => {
    const agent = fleet.get(t);
    return [...(agent ? [agent.spec.tenant_scope] : []), ...(byType.get(t) ?? []).map((p) => p.tenant_scope)];
  };
  const visible = (t: string, tenant: string | null): boolean => scopes(t).some((s) => s === null || s === tenant);
  const providers = (capability: string): Set<string> => {
    const out = new Set(fleet.providersOf(capability));
    for (const p of pending) if (p.capabilities.includes(capability)) out.add(p.agent_type);
    return out;
  };
  return {
    resolve: (dep, tenant) => {
      const certain = !byType.has(dep.name);
      const byName = AGENT_TYPE_RE.test(dep.name) && visible(dep.name, tenant) ? [dep.name] : [];
      if (dep.type !== "tool" || (certain && byName.length > 0)) return byName;
      const byCapability = [...providers(dep.name)].filter((t) => t !== dep.name && visible(t, tenant)).sort();
      return [...byName, ...byCapability];
    },
    declared: (t) => {
      const agent = fleet.get(t);
      return [...(agent ? [{ tenant: agent.spec.tenant_scope, depends: agent.spec.depends ?? [] }] : []), ...(byType.get(t) ?? []).map((p) => ({ tenant: p.tenant_scope, depends: p.depends }))];
    },
  };
}

/** The refusal of a spec whose dependency `cycle.index` closes the cycle (400 invalid_spec, the path of that dependency). */
export function cycleRefusal(cycle: DependencyCycle): RegistryError {
  const message = `closes the dependency cycle ${cycle.path.join(" -> ")}`;
  return invalidSpec(`spec is invalid: depends.${cycle.index} ${message}`, [{ path: `depends.${cycle.index}`, message }]);
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
