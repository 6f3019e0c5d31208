/**
 * The `discover` and `find` queries of PROTOCOL.md section 2: the lookup helpers of the
 * static registry design (FindBySkill, FindByTag, FindByName) and its discovery listing,
 * answered from the live view.
 */
import type { AgentIndex } from "./agent-index.js";
import { invalidRequest } from "../errors.js";
import { AgentStatus, InstanceStatus } from "../model/model.js";
import type { AgentState } from "../model/model.js";
import type { AgentSpec } from "../spec/spec.js";
import type { AgentKind } from "../../protocol/spec.js";
import { ofKind, offeredTo } from "./filters.js";
import { deprecatedMark } from "./agent-view.js";

export const DiscoverStatus = { Ready: "ready", Busy: "busy", Unavailable: "unavailable" } as const;
export type DiscoverStatus = (typeof DiscoverStatus)[keyof typeof DiscoverStatus];

export type Provider = NonNullable<AgentSpec["providers"]>[number];

export type DiscoveredAgent = {
  readonly id: string;
  readonly capabilities: readonly string[];
  readonly status: DiscoverStatus;
  readonly providers?: readonly Provider[];
};

/**
 * `ready` when some live instance is ready with room for another task, `busy` when every
 * ready instance reports active_tasks >= max_concurrent_tasks, `unavailable` when no
 * instance is ready (registered or draining only).
 */
export function discoverStatus(agent: AgentState): DiscoverStatus {
  let ready = 0;
  let full = 0;
  for (const inst of agent.instances.values()) {
    if (inst.status !== InstanceStatus.Ready) continue;
    ready++;
    if (inst.active_tasks >= agent.spec.max_concurrent_tasks) full++;
  }
  if (ready === 0) return DiscoverStatus.Unavailable;
  return full === ready ? DiscoverStatus.Busy : DiscoverStatus.Ready;
}

/**
 * The `agents` of a discover reply: every agent that is not deregistered (and, when
 * `capability` is given, provides it; when `kind` is, is of that kind), ordered by id.
 * Visibility is the caller's filter.
 */
export function discover(agents: Iterable<AgentState>, capability?: string, kind?: AgentKind): DiscoveredAgent[] {
  const out: DiscoveredAgent[] = [];
  for (const agent of agents) {
    if (agent.status === AgentStatus.Deregistered || !ofKind(agent, kind)) continue;
    if (capability !== undefined && !agent.spec.capabilities.some((c) => c.name === capability)) continue;
    const item: { -readonly [K in keyof DiscoveredAgent]: DiscoveredAgent[K] } = {
      id: agent.agent_type,
      capabilities: agent.spec.capabilities.map((c) => c.name),
      status: discoverStatus(agent),
      ...deprecatedMark(agent),
    };
    // An empty providers list says nothing, so it is left out like an absent one.
    if (agent.spec.providers && agent.spec.providers.length > 0) item.providers = agent.spec.providers;
    out.push(item);
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** `verified_only` (v1.2): verified agents only, as offeredTo asks it of every query. */
export type FindQuery = { readonly skill?: unknown; readonly tag?: unknown; readonly name?: unknown; readonly verified_only?: boolean | undefined };

const FIND_KEYS = ["skill", "tag", "name"] as const;

/**
 * FindBySkill (capability name), FindByTag (capability tag) or FindByName (agent_type):
 * the visible, non-deregistered agents that match, ordered by agent_type. Keys other than
 * skill/tag/name/verified_only (such as min_revision) are not the concern of this function.
 */
export function find(index: AgentIndex, query: FindQuery, tenant: string | null): AgentState[] {
  const given = FIND_KEYS.filter((k) => query[k] !== undefined);
  const key = given[0];
  if (given.length !== 1 || key === undefined) {
    throw invalidRequest(`find needs exactly one of skill, tag, name (got ${given.length === 0 ? "none" : given.join(", ")})`);
  }
  const value = query[key];
  if (typeof value !== "string" || value.length === 0) {
    throw invalidRequest(`find: ${key} must be a non-empty string`, [{ path: key, message: "must be a non-empty string" }]);
  }

  let types: Iterable<string>;
  if (key === "skill") types = index.byCapability(value);
  else if (key === "tag") types = index.byTag(value);
  else types = [value];

  const out: AgentState[] = [];
  for (const t of types) {
    const agent = index.get(t);
    // A spec waiting for (or refused) an operator's approval is not found (approval-policy.ts).
    if (agent && agent.status !== AgentStatus.Deregistered && offeredTo(agent, tenant, query.verified_only)) out.push(agent);
  }
  return out.sort((a, b) => (a.agent_type < b.agent_type ? -1 : a.agent_type > b.agent_type ? 1 : 0));
}
