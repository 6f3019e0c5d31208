/**
 * The filters PROTOCOL.md section 10.2 adds to the queries: `kind` (lookup, list, search,
 * discover) keeps the entries of one kind, `read_only` (lookup, search) keeps the capabilities
 * an MCP client may call without side effects. Each query applies them before it pages, so a
 * cursor continues the filtered list.
 */
import type { AgentKind } from "../../protocol/spec.js";
import type { Capability } from "../spec/spec.js";
import { visibleTo, type AgentState } from "../model/model.js";
import { isRoutable } from "../trust/approval-policy.js";

/** True when no kind is asked for, or the agent is of that kind. */
export const ofKind = (agent: AgentState, kind: AgentKind | undefined): boolean => kind === undefined || agent.spec.kind === kind;

/**
 * Only an explicit `readOnlyHint: true` counts: MCP's default for the hint is false, and a
 * capability without annotations (any agent's) says nothing about its side effects.
 */
export const isReadOnly = (cap: Capability): boolean => cap.annotations?.readOnlyHint === true;

/**
 * Whether a query may offer the agent to `tenant`: visible to it (shared, or its own), routable
 * (its spec approved and not withheld: approval-policy.ts), and verified when only verified
 * providers are asked for (`verified_only`). Every query that lists or picks providers asks
 * this one question.
 */
export function offeredTo(agent: AgentState, tenant: string | null, verifiedOnly?: boolean): boolean {
  return visibleTo(agent, tenant) && isRoutable(agent) && (verifiedOnly !== true || agent.trust !== undefined);
}
