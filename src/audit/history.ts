/**
 * The `history` op (PROTOCOL.md section 12): the body checked with zod, one SQL query over
 * `audit_events` paged by stream sequence, and the reply cut to fit the connection's
 * max_payload. A tenant's view sees shared agents' events (tenant null) and its own; the
 * shared view sees shared ones only, as every other query does.
 */
import type pg from "pg";
import { z } from "zod";
import { ErrorCode, RegistryError, invalidRequest } from "../domain/errors.js";
import { AGENT_TYPE_RE, CAPABILITY_MAX_LENGTH, CAPABILITY_RE } from "../protocol/ids.js";
import type { HistoryEvent, HistoryReply } from "../protocol/messages.js";
import { parseMessage } from "../domain/messages.js";

export const HISTORY_MAX_LIMIT = 1000;
export const HISTORY_DEFAULT_LIMIT = 100;
/** Bytes kept free for the reply's other fields around the events. */
const REPLY_OVERHEAD_BYTES = 1024;

/**
 * A time JavaScript can read, in years 1 to 9999: a later one (JavaScript reaches 275760)
 * prints as "+275760-..." in ISO form, which PostgreSQL refuses, and would reach the database
 * as an error instead of being refused here as the caller's.
 */
export const isoTime = z
  .string()
  .max(64)
  .refine((s) => {
    const ms = Date.parse(s);
    if (Number.isNaN(ms)) return false;
    const year = new Date(ms).getUTCFullYear();
    return year >= 1 && year <= 9999;
  }, "an ISO 8601 time in the years 1 to 9999");

export const historyQuery = z
  .object({
    agent_type: z.string().regex(AGENT_TYPE_RE).optional(),
    capability: z.string().max(CAPABILITY_MAX_LENGTH).regex(CAPABILITY_RE).optional(),
    types: z.array(z.string().min(1).max(128)).min(1).max(32).optional(),
    since: isoTime.optional(),
    until: isoTime.optional(),
    limit: z.number().int().min(1).max(HISTORY_MAX_LIMIT).default(HISTORY_DEFAULT_LIMIT),
    cursor: z.string().max(64).optional(),
  })
  .strict();

export type HistoryQuery = z.output<typeof historyQuery>;

export const encodeCursor = (seq: number): string => Buffer.from(`seq:${seq}`).toString("base64url");

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, "base64url").toString();
  const m = /^seq:(\d{1,16})$/.exec(text);
  if (!m) throw invalidRequest("cursor is not one this endpoint returned", [{ path: "cursor", message: "unknown cursor" }]);
  return Number(m[1]);
}

export type HistorySource = {
  pool: pg.Pool;
  stream: string;
  /** The stream's last sequence, as recently seen. */
  streamLastSeq: () => Promise<number>;
  maxPayload: () => number;
};

/** PostgreSQL or the network failed, as opposed to a query this code got wrong. */
function isUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === "string" ? e.code : "";
  if (/^(08|57P|53)/.test(code) || /^E(CONN|HOST|NET|PIPE|AI_)|^ENOTFOUND|^ETIMEDOUT/.test(code)) return true;
  return typeof e?.message === "string" && /connection|timeout|terminat/i.test(e.message);
}

/**
 * One query over the mirrored events, with the position they are mirrored through (read first,
 * so the rows hold at least that much). A database that cannot be reached is 503 `unavailable`.
 */
export async function readMirrored<Row extends pg.QueryResultRow>(source: HistorySource, sql: string, params: unknown[]): Promise<{ rows: Row[]; mirrored: number }> {
  try {
    const position = await source.pool.query<{ seq: string }>("SELECT seq FROM audit_position WHERE stream = $1", [source.stream]);
    const mirrored = position.rows[0] ? Number(position.rows[0].seq) : 0;
    return { rows: (await source.pool.query<Row>(sql, params)).rows, mirrored };
  } catch (err) {
    if (isUnreachable(err)) throw new RegistryError(ErrorCode.Unavailable, "the audit database cannot be reached; retry later", { cause: err });
    throw err;
  }
}

export async function history(source: HistorySource, body: unknown, tenant: string | null): Promise<HistoryReply> {
  const q = parseMessage(historyQuery, body, "history");
  if (q.since !== undefined && q.until !== undefined && Date.parse(q.since) >= Date.parse(q.until)) {
    throw invalidRequest("history: since must be before until", [{ path: "until", message: "not after since" }]);
  }
  const after = q.cursor === undefined ? 0 : decodeCursor(q.cursor);
  const where = ["seq > $1"];
  const params: unknown[] = [after];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace("?", `$${params.length}`));
  };
  if (tenant === null) where.push("tenant IS NULL");
  else add("(tenant IS NULL OR tenant = ?)", tenant);
  if (q.agent_type !== undefined) add("agent_type = ?", q.agent_type);
  if (q.capability !== undefined) add("capability = ?", q.capability);
  if (q.types !== undefined) add("type = ANY(?::text[])", q.types);
  if (q.since !== undefined) add("time >= ?", new Date(q.since).toISOString());
  if (q.until !== undefined) add("time < ?", new Date(q.until).toISOString());
  params.push(q.limit + 1);
  const sql = `SELECT seq, event::text AS event FROM audit_events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT $${params.length}`;
  const { rows, mirrored } = await readMirrored<{ seq: string; event: string }>(source, sql, params);
  const streamLast = await source.streamLastSeq();
  return page(rows, q.limit, source.maxPayload() - REPLY_OVERHEAD_BYTES, mirrored, Math.max(streamLast, mirrored));
}

/** The rows that fit both `limit` and `budget` bytes; the cursor resumes after the last one sent. */
export function page(rows: ReadonlyArray<{ seq: string; event: string }>, limit: number, budget: number, mirrored: number, streamLast: number): HistoryReply {
  const events: HistoryEvent[] = [];
  let used = 0;
  let cut = false;
  for (const row of rows.slice(0, limit)) {
    const seq = Number(row.seq);
    let event = { ...(JSON.parse(row.event) as object), seq } as HistoryEvent;
    let size = Buffer.byteLength(JSON.stringify(event)) + 1;
    if (used + size > budget) {
      if (events.length > 0) {
        cut = true;
        break;
      }
      // One event bigger than a reply can be: sent without its data, so paging still moves on.
      const { data: _data, ...envelope } = event;
      event = { ...envelope, data: null, data_omitted: true } as HistoryEvent;
      size = Buffer.byteLength(JSON.stringify(event)) + 1;
    }
    events.push(event);
    used += size;
  }
  const more = cut || rows.length > limit;
  const last = events[events.length - 1];
  return { events, next_cursor: more && last ? encodeCursor(last.seq) : null, mirrored_seq: mirrored, stream_last_seq: streamLast };
}
