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
import { isApprovedView } from "./approved-view.js";
import { catalogEntry, type CatalogEntry } from "./catalog-entry.js";
import { listAgents, type ListResponse, type Scope } from "./discovery-api.js";
import { passesListFilter, sortListed, type ListedEntry, type ListFilter, type OrderKey } from "./list-filter.js";

export type AgentListQuery = { pageSize: number; pageToken: string | undefined; filter: ListFilter | undefined; orderBy: OrderKey[] | undefined };

const LIVE_STATUSES = ["registered", "ready", "draining"] as const;
/** The registry's page a scan reads: fixed, so a token's page is the same page when read again. */
const SCAN_PAGE = 100;
/** Registry pages one filtered request reads at most; past that the page ends short, with a token to go on from. */
const MAX_SCAN_PAGES = 10;
/** The most agents `orderBy` sorts. */
export const MAX_ORDERED = 10_000;
const MAX_TOKEN_LENGTH = 1024;

type Position = { cursor: string | null; skip: number; offset: number };

function digestOf(q: AgentListQuery): string {
  const filter = q.filter ? [[...q.filter.strings].sort(), [...q.filter.dates].sort()] : null;
  return createHash("sha256").update(JSON.stringify([filter, q.orderBy ?? null])).digest("base64url").slice(0, 16);
}

function encodeToken(p: Position, digest: string): string {
  return Buffer.from(JSON.stringify({ c: p.cursor, s: p.skip, o: p.offset, q: digest })).toString("base64url");
}

function decodeToken(token: string | undefined, digest: string): Position {
  if (token === undefined || token === "") return { cursor: null, skip: 0, offset: 0 };
  const refused = () => invalidArgument("pageToken is not one this registry issued");
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw refused();
  }
  const { c, s, o, q } = (parsed ?? {}) as Record<string, unknown>;
  const count = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;
  if ((c !== null && typeof c !== "string") || !count(s) || !count(o) || typeof q !== "string") throw refused();
  if (q !== digest) throw invalidArgument("pageToken belongs to another filter or orderBy");
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
  const items: CatalogEntry[] = [];
  let { cursor, skip } = start;
  const done = (next: Position | undefined): ListResponse => (next ? { items, pageToken: encodeToken(next, digest) } : { items });
  for (let read = 0; read < MAX_SCAN_PAGES; read++) {
    const reply = await scope.client.list({ status: [...LIVE_STATUSES], instances_limit: 1, limit: SCAN_PAGE, ...(cursor !== null ? { cursor } : {}) });
    for (let i = skip; i < reply.agents.length; i++) {
      const view = reply.agents[i]!;
      const item = listed(view, scope);
      if (isApprovedView(view) && passesListFilter(item, filter)) items.push(item.entry);
      if (items.length === q.pageSize) {
        const more = i + 1 < reply.agents.length || reply.next_cursor !== null;
        return done(more ? { cursor, skip: i + 1, offset: 0 } : undefined);
      }
    }
    if (reply.next_cursor === null) return done(undefined);
    cursor = reply.next_cursor;
    skip = 0;
  }
  return done({ cursor, skip: 0, offset: 0 });
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
