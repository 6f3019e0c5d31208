/**
 * Reading the registry's `list` in its agent_type order, a page of views at a time, for the
 * front's lists that keep only some agents (the MCP Registry's servers, ARD's filtered
 * `GET /agents`). A filter that matches few agents would read the whole fleet in one request,
 * so one request reads at most MAX_SCAN_PAGES pages; past that its page ends short, with a
 * position to go on from. Pages are a fixed size, so a position's page is the same page when
 * read again.
 */
import type { AgentView, ListRequest } from "../protocol/messages.js";
import type { Scope } from "./discovery-api.js";

/** Agents that are gone (kept in retention) are not offered to anyone discovering. */
export const LIVE_STATUSES = ["registered", "ready", "draining"] as const;
/** The registry's page a scan reads. */
export const SCAN_PAGE = 100;
const MAX_SCAN_PAGES = 10;

/** Where a scan starts: the registry's cursor of a `list` page (null: the first) and how many of its agents were read. */
export type ScanPosition = { cursor: string | null; skip: number };

/** A live agent's fields of `list` the scan passes on (kind, tags...): everything but paging and status. */
export type ScanFilters = Omit<ListRequest, "cursor" | "limit" | "status" | "instances_limit">;

/**
 * The items `keep` makes of the agents from `start` on (null: not kept), until `limit` are
 * kept, the fleet ends, or the page budget is spent; `next` is where the following page starts
 * (undefined: nothing after).
 */
export async function scanList<T>(scope: Scope, filters: ScanFilters, start: ScanPosition, limit: number, keep: (view: AgentView) => T | null): Promise<{ items: T[]; next: ScanPosition | undefined }> {
  const items: T[] = [];
  let { cursor, skip } = start;
  for (let read = 0; read < MAX_SCAN_PAGES; read++) {
    const reply = await scope.client.list({ ...filters, status: [...LIVE_STATUSES], instances_limit: 1, limit: SCAN_PAGE, ...(cursor !== null ? { cursor } : {}) });
    for (let i = skip; i < reply.agents.length; i++) {
      const item = keep(reply.agents[i]!);
      if (item !== null) items.push(item);
      if (items.length === limit) {
        const more = i + 1 < reply.agents.length || reply.next_cursor !== null;
        return { items, next: more ? { cursor, skip: i + 1 } : undefined };
      }
    }
    if (reply.next_cursor === null) return { items, next: undefined };
    cursor = reply.next_cursor;
    skip = 0;
  }
  return { items, next: { cursor, skip: 0 } };
}
