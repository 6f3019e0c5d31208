/**
 * The `route` query of PROTOCOL.md section 2: pick the one ready agent that best matches a
 * skill, tags and a preferred runtime. Candidates come from the index's skill, tag and
 * runtime sets, so the cost follows the number of matching agents, not the fleet size.
 */
import type { AgentIndex } from "./agent-index.js";
import { ErrorCode, RegistryError, invalidRequest } from "../errors.js";
import { AgentStatus } from "../model/model.js";
import type { AgentState } from "../model/model.js";
import { MAX_WEIGHT } from "../../protocol/spec.js";
import type { DeprecationView } from "../../protocol/messages.js";
import { offeredTo } from "./filters.js";
import { deprecatedMark } from "./agent-view.js";

export type RouteRequest = {
  readonly skill?: string;
  readonly tags?: readonly string[];
  readonly preferred_runtime?: string;
  /** v1.2: agents whose stored spec was verified only (docs/trust.md). */
  readonly verified_only?: boolean;
};

/** `deprecated` (v1.2): present when an operator deprecated the candidate's agent type. */
export type RouteCandidate = { readonly agent_type: string; readonly score: number; readonly deprecated?: DeprecationView };

export type RouteResult = {
  readonly agent_type: string;
  readonly nats_subject: string;
  readonly consumer_group: string;
  readonly version: string;
  /** null when the spec names no runtime. */
  readonly runtime: string | null;
  readonly score: number;
  /** Every visible ready agent scoring above zero, best first (the winner included). */
  readonly candidates: readonly RouteCandidate[];
  /** v1.2: present when the chosen agent type is deprecated (it still routes, docs/trust.md "Deprecation"). */
  readonly deprecated?: DeprecationView;
};

export const ROUTE_WEIGHTS = { skill: 1.0, tag: 0.5, runtime: 0.1 } as const;

// Sums like 0.5 + 0.1 are not exact in binary; six decimals hide the noise and keep ties ties.
const SCORE_SCALE = 1e6;
export const roundScore = (x: number): number => Math.round(x * SCORE_SCALE) / SCORE_SCALE;

/**
 * Scores every visible ready agent that matches at least one criterion and returns the best.
 * Throws `invalid_request` when the request names no criterion and `no_route` when no agent
 * scores above zero. Ties go to an agent type that is not deprecated (v1.2: the operator said
 * to move away from a deprecated one, which still routes when nothing else scores as high), then
 * to the agent registered first (then agent_type, to stay total).
 */
export function route(index: AgentIndex, req: RouteRequest, tenant: string | null): RouteResult {
  const skill = nonEmpty(req.skill);
  const runtime = nonEmpty(req.preferred_runtime);
  // Each requested tag counts once however often it is repeated.
  const tags = [...new Set((req.tags ?? []).filter((t) => typeof t === "string" && t.length > 0))];
  if (skill === undefined && runtime === undefined && tags.length === 0) {
    throw invalidRequest("route needs at least one of skill, tags, preferred_runtime");
  }

  const candidateTypes = new Set<string>();
  if (skill !== undefined) for (const t of index.byCapability(skill)) candidateTypes.add(t);
  for (const tag of tags) for (const t of index.byTag(tag)) candidateTypes.add(t);
  if (runtime !== undefined) for (const t of index.byRuntime(runtime)) candidateTypes.add(t);

  const scored: { agent: AgentState; score: number }[] = [];
  for (const agentType of candidateTypes) {
    const agent = index.get(agentType);
    if (!agent || agent.status !== AgentStatus.Ready || !offeredTo(agent, tenant, req.verified_only)) continue;
    let raw = 0;
    if (skill !== undefined && index.byCapability(skill).has(agentType)) raw += ROUTE_WEIGHTS.skill;
    for (const tag of tags) if (index.byTag(tag).has(agentType)) raw += ROUTE_WEIGHTS.tag;
    if (runtime !== undefined && agent.spec.runtime === runtime) raw += ROUTE_WEIGHTS.runtime;
    const score = roundScore(raw * routingWeight(agent.spec.weight));
    if (score > 0) scored.push({ agent, score });
  }

  scored.sort(
    (a, b) =>
      b.score - a.score ||
      Number(a.agent.deprecation !== undefined) - Number(b.agent.deprecation !== undefined) ||
      a.agent.registered_at - b.agent.registered_at ||
      (a.agent.agent_type < b.agent.agent_type ? -1 : a.agent.agent_type > b.agent.agent_type ? 1 : 0),
  );
  const best = scored[0];
  if (!best) throw new RegistryError(ErrorCode.NoRoute, `${describeNoRoute(skill, tags, runtime)}${req.verified_only === true ? " (verified agents only)" : ""}`);

  const spec = best.agent.spec;
  return {
    agent_type: best.agent.agent_type,
    nats_subject: spec.nats_subject,
    consumer_group: spec.consumer_group,
    version: spec.version,
    runtime: spec.runtime ?? null,
    score: best.score,
    candidates: scored.map((s) => ({ agent_type: s.agent.agent_type, score: s.score, ...deprecatedMark(s.agent) })),
    ...deprecatedMark(best.agent),
  };
}

/**
 * The weight a score is multiplied by. Specs are bounded at MAX_WEIGHT, but a record stored
 * before the bound may carry more (1e308 made every score Infinity, sent as null): capped
 * here too, so every score stays finite whatever the store holds.
 */
export function routingWeight(weight: unknown): number {
  return typeof weight === "number" && weight > 0 ? Math.min(weight, MAX_WEIGHT) : 1;
}

function nonEmpty(v: unknown): string | undefined {
  return typeof v === "string" && v.length > 0 ? v : undefined;
}

function describeNoRoute(skill: string | undefined, tags: readonly string[], runtime: string | undefined): string {
  const parts: string[] = [];
  if (skill !== undefined) parts.push(`skill ${JSON.stringify(skill)}`);
  if (tags.length > 0) parts.push(`tags ${JSON.stringify(tags)}`);
  if (runtime !== undefined) parts.push(`runtime ${JSON.stringify(runtime)}`);
  return `no ready agent matches ${parts.join(", ")}`;
}
