/**
 * `registry.agent.trust_changed` (docs/trust.md, "When trust roots change"), derived like every
 * other event from the spec record's transition: the same spec (same content) moved between
 * verified, unverified and withheld, or to another key or publisher. A re-judgement after the
 * trust roots changed causes it, and so does a registration of the same spec signed anew; a new
 * spec is told by registered/updated events instead. Since it follows from the record, the
 * replicas that all re-judge write it once (compare-and-set) and it is published once.
 */
import { EventType, type TrustChangedData } from "../../protocol/events.js";
import { sameContent } from "../spec/spec-diff.js";
import type { AgentSpec } from "../spec/spec.js";
import { trustStateOf } from "../trust/trust-standing.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { Attestation } from "../trust/verify-signatures.js";
import type { DerivedEvent } from "./events.js";

type Standing = { readonly trust?: Attestation | undefined; readonly trust_lapse?: TrustLapse | undefined };

export function trustChangedEvent(agentType: string, spec: AgentSpec, before: Standing & { readonly spec: AgentSpec }, after: Standing, revision: number): DerivedEvent | undefined {
  if (!sameContent(before.spec, spec)) return undefined;
  const previous = trustStateOf(before);
  const state = trustStateOf(after);
  const sameKey = before.trust?.kid === after.trust?.kid && before.trust?.publisher === after.trust?.publisher;
  if (previous === state && sameKey) return undefined;
  const lapse = after.trust_lapse;
  const data: TrustChangedData = {
    agent_type: agentType,
    version: spec.version,
    tenant_scope: spec.tenant_scope,
    previous_state: previous,
    state,
    kid: after.trust?.kid ?? lapse?.kid ?? before.trust?.kid ?? null,
    publisher: after.trust?.publisher ?? before.trust?.publisher ?? null,
    reason: lapse?.reason ?? (state === "verified" ? "verified" : "registered"),
    revision,
  };
  return { type: EventType.AgentTrustChanged, subject: agentType, data };
}
