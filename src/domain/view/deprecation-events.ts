/**
 * Deprecation's events (docs/trust.md, "Deprecation"), derived like every other event from the
 * spec record's transition: `registry.agent.deprecated` when an operator's deprecation is
 * stored (or its words replaced), `registry.agent.undeprecated` when it is withdrawn. A
 * registration carries the deprecation over unchanged and so causes none.
 */
import { EventType, type DeprecationData } from "../../protocol/events.js";
import { sameDeprecation, type Deprecation, type Undeprecation } from "../trust/deprecation.js";
import type { AgentSpec } from "../spec/spec.js";
import type { DerivedEvent } from "./events.js";

export function deprecationEvent(
  agentType: string,
  spec: AgentSpec,
  before: Deprecation | undefined,
  after: Deprecation | undefined,
  withdrawal: Undeprecation | undefined,
  revision: number,
): DerivedEvent | undefined {
  if (sameDeprecation(before, after)) return undefined;
  // Withdrawn: the operator who withdrew it, as the record says (or, from an older writer, who deprecated it).
  const words = after ?? withdrawal ?? before!;
  const data: DeprecationData = {
    agent_type: agentType,
    version: spec.version,
    tenant_scope: spec.tenant_scope,
    deprecated: after !== undefined,
    by: words.by,
    reason: words.reason ?? null,
    successor: after?.successor ?? null,
    revision,
  };
  return { type: after !== undefined ? EventType.AgentDeprecated : EventType.AgentUndeprecated, subject: agentType, data };
}
