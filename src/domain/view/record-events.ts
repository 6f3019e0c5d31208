/**
 * The events a spec record's change causes beside the capability changes: the approval gate's
 * (approval-events.ts), a trust standing's (trust-events.ts) and a deprecation's
 * (deprecation-events.ts), each comparing what the view held before with the record applied.
 */
import type { AgentRecord } from "../model/record-types.js";
import type { AgentSpec } from "../spec/spec.js";
import type { Approval } from "../trust/approval-policy.js";
import type { Deprecation } from "../trust/deprecation.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { Attestation } from "../trust/verify-signatures.js";
import { approvalEvent } from "./approval-events.js";
import { deprecationEvent } from "./deprecation-events.js";
import type { DerivedEvent } from "./events.js";
import { trustChangedEvent } from "./trust-events.js";

/** What the view held of the record before (undefined: nothing, a new agent type to the view). */
export type RecordBefore = {
  readonly spec: AgentSpec;
  readonly approval: Approval | undefined;
  readonly trust: Attestation | undefined;
  readonly trust_lapse: TrustLapse | undefined;
  readonly deprecation: Deprecation | undefined;
};

export const recordBefore = (a: RecordBefore): RecordBefore => ({ spec: a.spec, approval: a.approval, trust: a.trust, trust_lapse: a.trust_lapse, deprecation: a.deprecation });

export function recordEvents(agentType: string, before: RecordBefore | undefined, record: AgentRecord, revision: number): DerivedEvent[] {
  const out: DerivedEvent[] = [];
  const decided = approvalEvent(agentType, record.spec, before, record.approval, revision);
  if (decided) out.push(decided);
  const trustChanged = before === undefined ? undefined : trustChangedEvent(agentType, record.spec, before, record, revision);
  if (trustChanged) out.push(trustChanged);
  const deprecated = deprecationEvent(agentType, record.spec, before?.deprecation, record.deprecation, record.undeprecation, revision);
  if (deprecated) out.push(deprecated);
  return out;
}
