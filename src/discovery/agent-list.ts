/**
 * ARD's `GET /agents` with `filter` and `orderBy` (list-filter.ts): without either, the fleet in
 * the registry's `list` order with its cursor as the token (discovery-api.ts listAgents); with a
 * filter, a bounded scan of the registry's pages in that order; with `orderBy`, the whole view
 * read, filtered and sorted for each page, up to MAX_ORDERED agents (past that, 400: sorting a
 * larger fleet per request would cost every request the fleet). A spec that waits for approval
 * or was rejected is no entry (approved-view.ts). Tokens are this front's,
 * bound to the filter and order they were issued for, as POST /search's are.
 */
import { createHash } from "node:crypto";
import type { AgentView } from "../protocol/messages.js";
import { invalidArgument } from "./ard-error.js";
import { decodeBoundToken, encodeBoundToken, isCount } from "./page-token.js";
import { isApprovedView } from "./approved-view.js";
import { LIVE_STATUSES, SCAN_PAGE, scanList } from "./registry-scan.js";
import { catalogEntry } from "./catalog-entry.js";
import { listAgents, type ListResponse, type Scope } from "./discovery-api.js";
import { passesListFilter, sortListed, type ListedEntry, type ListFilter, type OrderKey } from "./list-filter.js";

export type AgentListQuery = { pageSize: number; pageToken: string | undefined; filter: ListFilter | undefined; orderBy: OrderKey[] | undefined };

/** The most agents `orderBy` sorts. */
export const MAX_ORDERED = 10_000;

type Position = { cursor: string | null; skip: number; offset: number };

function digestOf(q: AgentListQuery): string {
  const filter = q.filter ? [[...q.filter.strings].sort(), [...q.filter.dates].sort()] : null;
  return createHash("sha256").update(JSON.stringify([filter, q.orderBy ?? null])).digest("base64url").slice(0, 16);
}

function encodeToken(p: Position, digest: string): string {
  return encodeBoundToken({ c: p.cursor, s: p.skip, o: p.offset }, digest);
}

function decodeToken(token: string | undefined, digest: string): Position {
  if (token === undefined || token === "") return { cursor: null, skip: 0, offset: 0 };
  const { c, s, o } = decodeBoundToken(token, digest, "pageToken", "another filter or orderBy", (f) => (f["c"] === null || typeof f["c"] === "string") && isCount(f["s"]) && isCount(f["o"]));
  return { cursor: c as string | null, skip: s as number, offset: o as number };
}

const listed = (view: AgentView, scope: Scope): ListedEntry => ({ entry: catalogEntry(view, scope.links), createdAt: view.registered_at });

/** `GET /agents`, filtered and ordered as asked. */
export async function listAgentsQuery(scope: Scope, q: AgentListQuery): Promise<ListResponse> {
  if (!q.filter && !q.orderBy) return listAgents(scope, q.pageSize, q.pageToken);
  const digest = digestOf(q);
  const start = decodeToken(q.pageToken, digest);
  return q.orderBy ? orderedPage(scope, q, q.orderBy, start.offset, digest) : filteredPage(scope, q, q.filter!, start, digest);
}

async function filteredPage(scope: Scope, q: AgentListQuery, filter: ListFilter, start: Position, digest: string): Promise<ListResponse> {
  const { items, next } = await scanList(scope, {}, start, q.pageSize, (view) => {
    const item = listed(view, scope);
    return isApprovedView(view) && passesListFilter(item, filter) ? item.entry : null;
  });
  return next ? { items, pageToken: encodeToken({ ...next, offset: 0 }, digest) } : { items };
}

async function orderedPage(scope: Scope, q: AgentListQuery, orderBy: readonly OrderKey[], offset: number, digest: string): Promise<ListResponse> {
  const all: ListedEntry[] = [];
  let cursor: string | null = null;
  let seen = 0;
  do {
    const reply = await scope.client.list({ status: [...LIVE_STATUSES], instances_limit: 1, limit: SCAN_PAGE, ...(cursor !== null ? { cursor } : {}) });
    seen += reply.agents.length;
    if (seen > MAX_ORDERED) throw invalidArgument(`orderBy sorts a view of at most ${MAX_ORDERED} agents and this one has more: page without orderBy, in the registry's order`);
    for (const view of reply.agents) {
      if (!isApprovedView(view)) continue;
      const item = listed(view, scope);
      if (!q.filter || passesListFilter(item, q.filter)) all.push(item);
    }
    cursor = reply.next_cursor;
  } while (cursor !== null);
  const sorted = sortListed(all, orderBy);
  const end = offset + q.pageSize;
  const items = sorted.slice(offset, end).map((i) => i.entry);
  return end < sorted.length ? { items, pageToken: encodeToken({ cursor: null, skip: 0, offset: end }, digest) } : { items };
}
