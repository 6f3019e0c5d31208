/**
 * Deprecation of an agent type (docs/trust.md, "Deprecation"): an operator's warning that the
 * type is on its way out, with why and the type to use instead. It is not a removal: a
 * deprecated type stays routable (every query still finds it, marked `deprecated`), since a
 * coordinator that loses its only provider overnight is worse off than one told to move. The
 * mark is the operator's word, kept on the spec record and carried over by every registration
 * of the type (a new version included), so an agent cannot clear it by registering again; only
 * `undeprecate` does.
 */
import { conflict, invalidRequest } from "../errors.js";
import type { AgentSpec } from "../spec/spec.js";

/** What the spec record keeps of a deprecation; `at` epoch ms, `by`, `reason` the operator's words. */
export type Deprecation = {
  readonly by: string;
  readonly at: number;
  readonly reason?: string;
  readonly successor?: string;
};

/**
 * Who withdrew a deprecation, when and why: written on the record with the withdrawal so that
 * the `registry.agent.undeprecated` event, derived from the record, can say it. Not carried by
 * later writes (nothing derives from it again).
 */
export type Undeprecation = { readonly by: string; readonly at: number; readonly reason?: string };

/** An operator's request to deprecate (`deprecated: true`) or to withdraw the deprecation. */
export type DeprecationDecision = {
  readonly deprecated: boolean;
  readonly by: string;
  readonly reason?: string;
  readonly successor?: string;
  /** The version the operator reviewed: refused if the stored spec is another. */
  readonly version?: string;
};

/** What the stored spec record holds, as far as deprecation reads it. */
export type StoredForDeprecation = { readonly spec: AgentSpec; readonly static?: boolean; readonly deprecation?: Deprecation };

/**
 * The deprecation the decision writes (undefined: none, after `undeprecate`), or a 409 naming
 * why it does not apply: another version is stored than the one reviewed, the entry comes from
 * the registry file (the file is the operator's own, deprecated there), or nothing would change
 * (deprecated again with the same words, or undeprecated when it is not). Deprecating again with
 * another reason or successor replaces them. A successor naming the type itself is refused.
 */
export function decideDeprecation(agentType: string, stored: StoredForDeprecation, decision: DeprecationDecision, now: number): Deprecation | undefined {
  if (decision.version !== undefined && decision.version !== stored.spec.version) {
    throw conflict(`${agentType}'s stored spec is version ${stored.spec.version}, not ${decision.version}: review the stored spec and decide on it`);
  }
  if (stored.static === true) throw conflict(`${agentType} comes from the registry file: deprecate it there`);
  const current = stored.deprecation;
  if (!decision.deprecated) {
    if (current === undefined) throw conflict(`${agentType} is not deprecated`);
    return undefined;
  }
  if (decision.successor === agentType) throw invalidRequest(`successor: ${agentType} cannot succeed itself`, [{ path: "successor", message: "names the agent type itself" }]);
  if (current !== undefined && current.reason === decision.reason && current.successor === decision.successor) {
    throw conflict(`${agentType} is already deprecated${current.reason !== undefined ? `: ${current.reason}` : ""}`);
  }
  return {
    by: decision.by,
    at: now,
    ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision.successor !== undefined ? { successor: decision.successor } : {}),
  };
}

/** Whether two deprecations say the same (undefined: not deprecated). */
export function sameDeprecation(a: Deprecation | undefined, b: Deprecation | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.by === b.by && a.at === b.at && a.reason === b.reason && a.successor === b.successor;
}
