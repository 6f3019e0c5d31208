/**
 * /ui/api/approvals: the specs waiting in the approval gate (docs/trust.md), or the rejected
 * ones, one page at a time, from the registry's `registry.approval.pending`, the op
 * `agent-registry pending` sends. It lists every tenant's, as it does for the CLI: the page is
 * the operator's. Rows are cut to what the view shows, so a page stays small whatever the
 * specs hold. Read-only: deciding stays with the operator's own credentials (docs/ui.md).
 */
import type { RegistryClient } from "../../client/registry-client.js";
import type { AgentView } from "../../client/types.js";
import { deprecationText, type ApprovalRow, type ApprovalsPage } from "../shared.js";

const STATES = ["pending", "rejected", "withheld"] as const;
type ListedState = (typeof STATES)[number];
const PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 500;
/** An operator's reason is shown whole up to this; a longer one is cut (the CLI's `get` has it all). */
const MAX_REASON_CHARS = 1000;

export class ApprovalsRequestError extends Error {}

export function approvalRow(a: AgentView): ApprovalRow {
  const decided = a.approval ?? { state: "approved" };
  return {
    agent_type: a.agent_type,
    display_name: a.display_name ?? null,
    description: a.description.slice(0, 200),
    version: a.version,
    tenant_scope: a.tenant_scope,
    owner_team: a.owner_team,
    registered_at: a.registered_at,
    instances: a.instance_count,
    ready: a.instances.filter((i) => i.status === "ready").length,
    revision: a.revision,
    verified_by: a.trust.verified ? a.trust.publisher : null,
    approval: { state: decided.state, by: decided.by ?? null, at: decided.at ?? null, reason: decided.reason?.slice(0, MAX_REASON_CHARS) ?? null },
    withheld: !a.trust.verified && a.trust.lapse?.state === "withheld" ? { reason: a.trust.lapse.reason, kid: a.trust.lapse.kid, at: a.trust.lapse.at } : null,
    deprecated: deprecationText(a.deprecated)?.slice(0, MAX_REASON_CHARS) ?? null,
  };
}

/** One page of `state` (pending by default) across tenants; `cursor`, `limit` and `min_revision` as the other routes take them. */
export async function pageApprovals(client: RegistryClient, q: URLSearchParams, minRevision: number | undefined): Promise<ApprovalsPage> {
  const state = (q.get("state") || "pending") as ListedState;
  if (!STATES.includes(state)) throw new ApprovalsRequestError(`state: one of ${STATES.join(", ")}`);
  const limitText = q.get("limit");
  const limit = limitText ? Number(limitText) : PAGE_SIZE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) throw new ApprovalsRequestError(`limit: an integer from 1 to ${MAX_PAGE_SIZE}`);
  const cursor = q.get("cursor");
  const reply = await client.pending({ state, limit, ...(cursor ? { cursor: cursor.slice(0, 1024) } : {}) }, minRevision === undefined ? {} : { minRevision });
  return { state, agents: reply.agents.map(approvalRow), next_cursor: reply.next_cursor, revision: reply.revision };
}
