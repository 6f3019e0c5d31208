/**
 * The operator's side of the approval gate (docs/trust.md, "The approval gate"): approve or
 * reject the stored spec of an agent type, and list the specs that wait for a decision. A
 * decision rewrites the spec record with compare-and-set on the revision it read, so it
 * applies to exactly the spec it was taken on: a registration that replaced the spec meanwhile
 * makes the write lose, and the decision is taken again on what the store now holds (refused
 * if the operator named the version or revision they reviewed and it is no longer that one).
 * The events follow from the record's change (domain/view/approval-events.ts).
 */
import { ErrorCode, RegistryError, conflict, notFound } from "../../domain/errors.js";
import { decide, ApprovalState, type ApprovalDecision } from "../../domain/trust/approval-policy.js";
import { agentKey, decodeAgentRecord, encodeRecord } from "../../domain/model/records.js";
import { StoreConflictError, StoreFullError, StoreUnavailableError, type Store } from "../../domain/ports.js";
import { agentView, approvalView } from "../../domain/query/agent-view.js";
import { decodeCursor, encodeCursor, indexAfter, takePage } from "../../domain/query/page.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { AgentState } from "../../domain/model/model.js";
import type { PendingQuery } from "../../domain/messages.js";
import type { ApprovalReply, PendingReply } from "../../protocol/messages.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import type { Clock } from "../clock.js";
import type { RevisionWait } from "../view/revision-waiters.js";

const MAX_ATTEMPTS = 5;
/** Waits at most this long for a `min_revision` of the pending list, as queries do. */
const MIN_REVISION_WAIT_MS = 2000;

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
    const { store } = this.deps;
    const key = agentKey(agentType);
    for (let attempt = 1; ; attempt++) {
      let entry;
      try {
        entry = await store.get(key);
      } catch (e) {
        throw storeError(e);
      }
      const record = entry !== null && entry.operation === "PUT" ? decodeAgentRecord(entry.value, agentType) : null;
      if (entry === null || record === null) throw notFound(`agent type ${agentType} is not registered`);
      if (request.revision !== undefined && request.revision !== entry.revision) {
        throw conflict(`${agentType}'s spec record is at revision ${entry.revision}, not ${request.revision}: it changed since it was reviewed; review it again`);
      }
      const now = this.deps.clock.now();
      const approval = decide(agentType, record, request, now);
      try {
        const revision = await store.write(key, encodeRecord({ ...record, approval, updated_at: now }), entry.revision);
        return { agent_type: agentType, version: record.spec.version, tenant_scope: record.spec.tenant_scope ?? null, approval: approvalView(approval), revision };
      } catch (e) {
        if (!(e instanceof StoreConflictError)) throw storeError(e);
        if (attempt >= MAX_ATTEMPTS) throw conflict(`lost the write race on ${agentType}'s spec ${MAX_ATTEMPTS} times in a row; retry`);
      }
    }
  }

  /** The specs in `state` (pending by default), ordered by agent type, of one tenant (null: shared agents) or all. */
  async pending(q: PendingQuery): Promise<PendingReply> {
    const { view } = this.deps;
    if (q.min_revision !== undefined && q.min_revision > view.revision) {
      const outcome = await this.deps.waitForRevision(q.min_revision, MIN_REVISION_WAIT_MS);
      if (outcome !== "reached") throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${view.revision}; min_revision ${q.min_revision} not reached`);
    }
    const revision = view.revision;
    const state = q.state ?? ApprovalState.Pending;
    const matching: AgentState[] = [];
    for (const a of view.all()) {
      if (a.approval?.state !== state) continue;
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

export function storeError(e: unknown): unknown {
  if (e instanceof StoreUnavailableError) return new RegistryError(ErrorCode.Unavailable, "the store cannot be reached", { cause: e });
  if (e instanceof StoreFullError) return new RegistryError(ErrorCode.Unavailable, "the registry's store is full; nothing was written", { cause: e });
  return e;
}
