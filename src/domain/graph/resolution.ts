/**
 * What a declared dependency (PROTOCOL.md section 11.2) resolves to in the fleet, and in what
 * state. The protocol names a dependency by type, name and exact version; how a name finds an
 * agent type is this registry's rule (docs/protocol.md, section 8):
 *   - `agent` and `mcp_server`: the agent type of that name, when it is of that kind;
 *   - `tool`: the agent type of that name when it is of kind `tool` (a tool registered on its
 *     own), otherwise every agent type of kind `mcp_server` or `tool` that provides a
 *     capability of that name (an MCP server's tool).
 * The declared type is a kind: a name shared by entities of other kinds (an agent's skill, an
 * agent or a server of that name) is another entity, not this dependency. Only agent types the
 * depending agent may see count (shared ones, and its own tenant's).
 */
import type { DependencyState } from "../../protocol/events.js";
import type { AgentKind, Dependency } from "../../protocol/spec.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { InstanceStatus, visibleTo, type AgentState } from "../model/model.js";

export type { Dependency, DependencyState };

/** The parts of the view resolution reads. */
export interface FleetReader {
  get(agentType: string): AgentState | undefined;
  providersOf(capability: string): ReadonlySet<string>;
}

export type Resolution = {
  state: DependencyState;
  /** The visible agent types the dependency names, best state first. */
  providers: string[];
  /** True when the name matched through a capability (a tool of an MCP server), not an agent type. */
  viaCapability: boolean;
};

/** The graph's id of a declared dependency: `agent:summarizer@2.0.0`. */
export const dependencyNodeId = (d: Pick<Dependency, "type" | "name" | "version">): string => `${d.type}:${d.name}@${d.version}`;

/** The graph's id of a registered agent type, by its kind and spec version. */
export const agentNodeId = (a: AgentState): string => `${a.spec.kind}:${a.agent_type}@${a.spec.version}`;

/** Better states first: a dependency several providers could satisfy takes the best of theirs. */
const STATE_RANK: Record<DependencyState, number> = { live: 0, registered: 1, version_mismatch: 2, deregistered: 3, missing: 4 };

export function betterState(a: DependencyState, b: DependencyState): DependencyState {
  return STATE_RANK[a] <= STATE_RANK[b] ? a : b;
}

/**
 * A provider's state for `version` (null: any version, for a tool found through a
 * capability, whose own version the registry does not know): `live` with a ready instance
 * running it, `registered` with instances running it but none ready, `version_mismatch` with
 * other versions only (or, with none live, a spec of another version), `deregistered` with
 * none live.
 */
export function providerState(agent: AgentState, version: string | null): DependencyState {
  let running = false;
  let others = false;
  for (const i of agent.instances.values()) {
    if (version !== null && i.version !== version) {
      others = true;
      continue;
    }
    if (i.status === InstanceStatus.Ready) return "live";
    running = true;
  }
  if (running) return "registered";
  if (others) return "version_mismatch";
  return version !== null && agent.spec.version !== version ? "version_mismatch" : "deregistered";
}

/** Kinds whose capabilities are tools: an agent's capabilities are its skills, never a `tool` dependency. */
const TOOL_HOLDERS: ReadonlySet<AgentKind> = new Set<AgentKind>(["mcp_server", "tool"]);

/** The agent types a dependency names, before their state is read (visible ones only). */
export function namedProviders(fleet: FleetReader, dep: Pick<Dependency, "type" | "name">, tenant: string | null): { types: string[]; viaCapability: boolean } {
  const visible = (t: string, kinds: (kind: AgentKind) => boolean): boolean => {
    const a = fleet.get(t);
    return a !== undefined && visibleTo(a, tenant) && kinds(a.spec.kind);
  };
  if (AGENT_TYPE_RE.test(dep.name) && visible(dep.name, (k) => k === dep.type)) return { types: [dep.name], viaCapability: false };
  if (dep.type !== "tool") return { types: [], viaCapability: false };
  return { types: [...fleet.providersOf(dep.name)].filter((t) => visible(t, (k) => TOOL_HOLDERS.has(k))).sort(), viaCapability: true };
}

export function resolveDependency(fleet: FleetReader, dep: Dependency, tenant: string | null): Resolution {
  const { types, viaCapability } = namedProviders(fleet, dep, tenant);
  if (types.length === 0) return { state: "missing", providers: [], viaCapability };
  const states = types.map((t) => ({ t, s: providerState(fleet.get(t)!, viaCapability ? null : dep.version) }));
  states.sort((a, b) => STATE_RANK[a.s] - STATE_RANK[b.s] || (a.t < b.t ? -1 : 1));
  return { state: states[0]!.s, providers: states.map((x) => x.t), viaCapability };
}
