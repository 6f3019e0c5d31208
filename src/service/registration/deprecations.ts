/**
 * The operator's deprecation of an agent type (docs/trust.md, "Deprecation"): deprecate it,
 * with why and the type to use instead, or withdraw the deprecation. Like an approval, the
 * decision rewrites the spec record with compare-and-set on the revision it read
 * (spec-record-rewrite.ts); the events follow from the record's change
 * (domain/view/deprecation-events.ts). A deprecated type stays routable.
 */
import { decideDeprecation, type DeprecationDecision } from "../../domain/trust/deprecation.js";
import { deprecationView } from "../../domain/query/agent-view.js";
import type { AgentRecord } from "../../domain/model/record-types.js";
import type { DeprecationReply } from "../../protocol/messages.js";
import { rewriteSpecRecord, type SpecRecordRewriteDeps } from "./spec-record-rewrite.js";

/** A deprecation as the endpoint receives it: the operator's words, and what they reviewed. */
export type DeprecationRequest = DeprecationDecision & { readonly revision?: number };

export class Deprecations {
  constructor(private readonly deps: SpecRecordRewriteDeps) {}

  async decide(agentType: string, request: DeprecationRequest): Promise<DeprecationReply> {
    const { record, revision } = await rewriteSpecRecord(this.deps, agentType, request.revision, (stored, now) =>
      withDeprecation(stored, decideDeprecation(agentType, stored, request, now), request, now),
    );
    const d = record.deprecation;
    return { agent_type: agentType, version: record.spec.version, tenant_scope: record.spec.tenant_scope ?? null, deprecated: d === undefined ? null : deprecationView(d), revision };
  }
}

/** The record with the decision: the deprecation, or (withdrawn) who withdrew it and why, for the event. */
function withDeprecation(stored: AgentRecord, deprecation: AgentRecord["deprecation"], request: DeprecationRequest, now: number): AgentRecord {
  const { deprecation: _before, undeprecation: _withdrawn, ...rest } = stored;
  if (deprecation !== undefined) return { ...rest, deprecation, updated_at: now };
  const undeprecation = { by: request.by, at: now, ...(request.reason !== undefined ? { reason: request.reason } : {}) };
  return { ...rest, undeprecation, updated_at: now };
}
