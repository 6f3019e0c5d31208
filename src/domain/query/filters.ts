/**
 * The filters PROTOCOL.md section 10.2 adds to the queries: `kind` (lookup, list, search,
 * discover) keeps the entries of one kind, `read_only` (lookup, search) keeps the capabilities
 * an MCP client may call without side effects. Each query applies them before it pages, so a
 * cursor continues the filtered list.
 */
import type { AgentKind } from "../../protocol/spec.js";
import type { Capability } from "../spec/spec.js";
import type { AgentState } from "../model/model.js";

/** True when no kind is asked for, or the agent is of that kind. */
export const ofKind = (agent: AgentState, kind: AgentKind | undefined): boolean => kind === undefined || agent.spec.kind === kind;

/**
 * Only an explicit `readOnlyHint: true` counts: MCP's default for the hint is false, and a
 * capability without annotations (any agent's) says nothing about its side effects.
 */
export const isReadOnly = (cap: Capability): boolean => cap.annotations?.readOnlyHint === true;
