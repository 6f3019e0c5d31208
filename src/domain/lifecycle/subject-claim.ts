/**
 * The rules of nats_subject ownership (issue 14, findings 10 and 13), pure: given what the
 * subject's claim key holds, whether a registration may use the subject and what it writes
 * to the key. The registrar writes the claim before the spec, with create or compare-and-set,
 * so the store decides between two racing registrations; the view alone could not.
 */
import { conflict } from "../errors.js";
import { AgentStatus, type AgentState } from "../model/model.js";
import type { StoredClaim, SubjectClaimRecord } from "../model/subject-claims.js";
import type { AgentSpec } from "../spec/spec.js";

export type ClaimWrite = { readonly record: SubjectClaimRecord; readonly expectedRevision: number };

/**
 * What a registration of `spec` writes to the claim of its nats_subject, or null when the claim
 * is already its own and stays as it is. Throws `conflict` when another agent type owns the
 * subject: whether that type is live or not, since a subject left free while its owner is
 * down (a restart, a deploy) could be taken by anyone and the owner's tasks with it. `touch`
 * rewrites an own claim: the spec record is being written, and a compare-and-set on the claim
 * then races the retention sweep's delete of it, so exactly one of the two wins.
 *
 * A store from before claims existed has none; then the old rule applies (no other live
 * type may use the subject) and the claim is created.
 */
export function planClaim(
  spec: AgentSpec,
  claim: StoredClaim | null,
  others: Iterable<AgentState>,
  touch: boolean,
  now: number,
): ClaimWrite | null {
  const subject = spec.nats_subject;
  if (claim && claim.record.agent_type !== spec.agent_type) {
    const owner = claim.record;
    const live = [...others].some((o) => o.agent_type === owner.agent_type && o.status !== AgentStatus.Deregistered);
    const why = live ? "" : "; it is kept for that type while it is down, until the type is removed after the retention period";
    throw conflict(`nats_subject ${subject} is already used by ${ownerName(owner.agent_type, owner.tenant_scope, spec.tenant_scope)}${why}`);
  }
  if (!claim) {
    for (const other of others) {
      if (other.agent_type === spec.agent_type || other.status === AgentStatus.Deregistered || other.spec.nats_subject !== subject) continue;
      throw conflict(`nats_subject ${subject} is already used by ${ownerName(other.agent_type, other.spec.tenant_scope, spec.tenant_scope)}`);
    }
  }
  const record: SubjectClaimRecord = {
    kind: "subject_claim",
    subject,
    agent_type: spec.agent_type,
    tenant_scope: spec.tenant_scope,
    at: claim?.record.at ?? now,
  };
  if (!claim) return { record, expectedRevision: 0 };
  if (touch || claim.record.tenant_scope !== spec.tenant_scope) return { record, expectedRevision: claim.revision };
  return null;
}

/**
 * How a conflict names another agent type: by name only when the registrant's tenant could
 * see it anyway (a shared type, or one of its own tenant); otherwise a message would tell one
 * tenant what another runs.
 */
export function ownerName(ownerType: string, ownerScope: string | null, registrantScope: string | null): string {
  return ownerScope === null || ownerScope === registrantScope ? `agent type ${ownerType}` : "another agent type";
}

/**
 * A claim nobody stands behind: its owner's stored spec is gone or names another subject.
 * It is left by a registration that failed between the claim and the spec write, or by a
 * subject change whose release failed; the retention sweep removes it once it has seen it so
 * for a whole sweep period (a registration in flight is over by then).
 */
export function isOrphanClaim(claim: SubjectClaimRecord, owner: AgentState | undefined): boolean {
  return owner === undefined || owner.spec.nats_subject !== claim.subject;
}
