/**
 * The nats_subject rules that depend on the registry's configuration (issue 14, findings 10
 * and 12), checked by the registrar after the spec's own rules (spec.ts):
 *  - no subject under the registry's own prefix: a coordinator routed there would be sending
 *    register, deregister or event messages on an agent's behalf;
 *  - with a subject policy (REGISTRY_SUBJECT_POLICY, e.g. `agent.tasks.{agent_type}`), the
 *    subject must be the policy's, so a type can only ever receive on subjects named after
 *    itself, which is what deploy/nats/auth.conf lets each agent user subscribe to.
 */
import type { ErrorIssue } from "../errors.js";
import { NATS_SUBJECT_RE } from "../../protocol/ids.js";

export const AGENT_TYPE_PLACEHOLDER = "{agent_type}";

export type SubjectRules = {
  /** First token(s) of every registry subject (REGISTRY_PREFIX). */
  readonly prefix: string;
  /** A template with {agent_type}; a trailing `.>` also allows subjects under it. Unset: any subject. */
  readonly subjectPolicy?: string | undefined;
};

export function subjectIssues(agentType: string, natsSubject: string, rules: SubjectRules): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  if (natsSubject === rules.prefix || natsSubject.startsWith(`${rules.prefix}.`)) {
    issues.push({ path: "nats_subject", message: `must not be under the registry's own prefix ${rules.prefix}` });
  }
  if (rules.subjectPolicy !== undefined && !followsPolicy(agentType, natsSubject, rules.subjectPolicy)) {
    const expected = rules.subjectPolicy.split(AGENT_TYPE_PLACEHOLDER).join(agentType);
    issues.push({ path: "nats_subject", message: `must be ${expected} (subject policy ${rules.subjectPolicy})` });
  }
  return issues;
}

function followsPolicy(agentType: string, natsSubject: string, policy: string): boolean {
  const expanded = policy.split(AGENT_TYPE_PLACEHOLDER).join(agentType);
  if (!expanded.endsWith(".>")) return natsSubject === expanded;
  const base = expanded.slice(0, -2);
  return natsSubject === base || natsSubject.startsWith(`${base}.`);
}

/** Why a subject policy cannot be used, or null: the config refuses it at start. */
export function subjectPolicyProblem(policy: string): string | null {
  if (!policy.includes(AGENT_TYPE_PLACEHOLDER)) return `must contain ${AGENT_TYPE_PLACEHOLDER}: without it every agent type would need the same subject`;
  const sample = policy.split(AGENT_TYPE_PLACEHOLDER).join("x");
  const base = sample.endsWith(".>") ? sample.slice(0, -2) : sample;
  return NATS_SUBJECT_RE.test(base) ? null : "must be a NATS subject once {agent_type} is filled in (no wildcards but a trailing .>, no spaces)";
}

/** The subject a policy gives an agent type (a `.>` template: its base subject itself). */
export function policySubject(agentType: string, policy: string): string {
  const expanded = policy.split(AGENT_TYPE_PLACEHOLDER).join(agentType);
  return expanded.endsWith(".>") ? expanded.slice(0, -2) : expanded;
}
