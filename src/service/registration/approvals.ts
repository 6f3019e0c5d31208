/**
 * The operator's side of the approval gate (docs/trust.md, "The approval gate"): approve or
 * reject the stored spec of an agent type, and list the specs that wait for a decision. A
 * decision rewrites the spec record with compare-and-set on the revision it read
 * (spec-record-rewrite.ts), so it applies to exactly the spec it was taken on. The events
 * follow from the record's change (domain/view/approval-events.ts).
 */
import { decide, ApprovalState, type ApprovalDecision } from "../../domain/trust/approval-policy.js";
import type { Store } from "../../domain/ports.js";
import { rewriteSpecRecord } from "./spec-record-rewrite.js";
import { agentView, approvalView } from "../../domain/query/agent-view.js";
import { decodeCursor, encodeCursor, indexAfter, takePage } from "../../domain/query/page.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { AgentState } from "../../domain/model/model.js";
import type { PendingQuery } from "../../domain/messages.js";
import type { ApprovalReply, PendingReply } from "../../protocol/messages.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import type { Clock } from "../clock.js";
import { reachRevision, type RevisionWait } from "../view/revision-waiters.js";

export type ApprovalsDeps = {
  store: Store;
  view: RegistryView;
  clock: Clock;
  /** Bytes the list of one reply may take (the connection's max_payload less the reply's other fields). */
  listBytes: () => number;
  waitForRevision: (revision: number, timeoutMs: number) => Promise<RevisionWait>;
};

/** A decision as the endpoint receives it: the operator's words, and what they reviewed. */
export type DecisionRequest = ApprovalDecision & { readonly revision?: number };

export class Approvals {
  constructor(private readonly deps: ApprovalsDeps) {}

  async decide(agentType: string, request: DecisionRequest): Promise<ApprovalReply> {
    const { record, revision } = await rewriteSpecRecord(this.deps, agentType, request.revision, (stored, now) => ({
      ...stored,
      approval: decide(agentType, stored, request, now),
      updated_at: now,
    }));
    return { agent_type: agentType, version: record.spec.version, tenant_scope: record.spec.tenant_scope ?? null, approval: approvalView(record.approval!), revision };
  }

  /** The specs in `state` (pending by default; or rejected, or withheld by trust), ordered by agent type, of one tenant (null: shared agents) or all. */
  async pending(q: PendingQuery): Promise<PendingReply> {
    const { view } = this.deps;
    if (q.min_revision !== undefined && q.min_revision > view.revision) await reachRevision(this.deps.waitForRevision, () => view.revision, q.min_revision);
    const revision = view.revision;
    const state = q.state ?? ApprovalState.Pending;
    // Withheld by trust (trust-lapse.ts) is no approval state, but as much the operator's to look at.
    const held = state === "withheld" ? (a: AgentState) => a.trust_lapse?.state === "withheld" : (a: AgentState) => a.approval?.state === state;
    const matching: AgentState[] = [];
    for (const a of view.all()) {
      if (!held(a)) continue;
      if (q.tenant !== undefined && (a.spec.tenant_scope ?? null) !== q.tenant) continue;
      matching.push(a);
    }
    matching.sort((x, y) => (x.agent_type < y.agent_type ? -1 : x.agent_type > y.agent_type ? 1 : 0));
    const from = q.cursor ? indexAfter(matching.map((a) => a.agent_type), decodeCursor(q.cursor, AGENT_TYPE_RE)) : 0;
    const page = takePage(matching.slice(from), (a) => a.agent_type, (a, bytesLeft) => agentView(a, { maxBytes: bytesLeft }), {
      limit: q.limit ?? 100,
      maxBytes: this.deps.listBytes(),
    });
    return { agents: page.items, next_cursor: page.next_cursor === null ? null : encodeCursor(page.next_cursor), revision };
  }
}
