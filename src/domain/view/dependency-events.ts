/**
 * The dependency events of PROTOCOL.md section 11.2 (named in docs/protocol.md, section 8):
 * when a store transition makes a declared dependency stop being live, or live again, the
 * agent type that declared it gets `registry.agent.dependency_lost` or `..._restored`.
 * Derived like every other event, from the view before and after one entry, in one order
 * (the edges come sorted), so every replica derives the same ids and the stream keeps one.
 */
import { EventType } from "../../protocol/events.js";
import type { DependentEdge, DependentsIndex } from "../graph/dependents-index.js";
import { dependencyNodeId, resolveDependency, type DependencyState, type FleetReader } from "../graph/resolution.js";
import type { DerivedEvent } from "./events.js";

export type DependencyWatch = { edges: readonly DependentEdge[]; before: DependencyState[] };

/**
 * What the dependencies that may resolve to `agentType` (or one of these capabilities) are
 * before an entry is applied; undefined when none may (the common case, and a cheap one).
 */
export function watchDependencies(fleet: FleetReader, index: DependentsIndex, agentType: string, capabilities: Iterable<string>): DependencyWatch | undefined {
  if (index.size === 0) return undefined;
  const edges = index.edgesFor(agentType, capabilities, (t) => fleet.get(t));
  if (edges.length === 0) return undefined;
  return { edges, before: edges.map((e) => stateOf(fleet, e)) };
}

/** The events for the dependencies whose liveness the entry changed. */
export function dependencyChanges(fleet: FleetReader, watch: DependencyWatch | undefined, revision: number): DerivedEvent[] {
  if (!watch) return [];
  const out: DerivedEvent[] = [];
  watch.edges.forEach((edge, i) => {
    const dependent = fleet.get(edge.dependent);
    if (!dependent) return;
    const after = resolveDependency(fleet, edge.dep, dependent.spec.tenant_scope);
    const wasLive = watch.before[i] === "live";
    if (wasLive === (after.state === "live")) return;
    out.push({
      type: wasLive ? EventType.DependencyLost : EventType.DependencyRestored,
      subject: edge.dependent,
      data: { agent_type: edge.dependent, dependency: edge.dep, node: dependencyNodeId(edge.dep), state: after.state, providers: after.providers, revision },
    });
  });
  return out;
}

function stateOf(fleet: FleetReader, edge: DependentEdge): DependencyState {
  const dependent = fleet.get(edge.dependent);
  return dependent ? resolveDependency(fleet, edge.dep, dependent.spec.tenant_scope).state : "missing";
}
