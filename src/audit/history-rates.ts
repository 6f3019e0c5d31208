/**
 * The `history_rates` op (protocol v1.2, docs/protocol.md section 8): registrations,
 * deregistrations and evictions per bucket of time over a range, counted by PostgreSQL in one
 * grouped query over `audit_events` (its time index), for the web page's longer chart ranges.
 * The same counting as the page's last hour (src/ui/web/minute-buckets.ts): an eviction is a
 * deregistration whose reason is `evicted`, counted in both. The same tenancy as `history`.
 */
import { z } from "zod";
import { ErrorCode, RegistryError, invalidRequest } from "../domain/errors.js";
import { parseMessage } from "../domain/messages.js";
import { EventType } from "../protocol/events.js";
import type { HistoryRatesReply, RateBucket } from "../protocol/messages.js";
import { isoTime, readMirrored, type HistorySource } from "./history.js";

/** Buckets one reply may span: 7 days at 15 minutes is 672, 24 hours at 2 minutes 720. */
export const MAX_RATE_BUCKETS = 1000;
const REPLY_OVERHEAD_BYTES = 1024;

export const historyRatesQuery = z
  .object({
    since: isoTime,
    until: isoTime.optional(),
    bucket_seconds: z.number().int().min(60).max(86_400),
  })
  .strict();

export async function historyRates(source: HistorySource, body: unknown, tenant: string | null, now: () => number = Date.now): Promise<HistoryRatesReply> {
  const q = parseMessage(historyRatesQuery, body, "history_rates");
  const since = Date.parse(q.since);
  const until = q.until === undefined ? now() : Date.parse(q.until);
  if (since >= until) throw invalidRequest("history_rates: since must be before until", [{ path: q.until === undefined ? "since" : "until", message: "not after since" }]);
  const count = Math.ceil((until - since) / (q.bucket_seconds * 1000));
  if (count > MAX_RATE_BUCKETS) {
    throw invalidRequest(`history_rates: ${count} buckets of ${q.bucket_seconds} s from since to until; at most ${MAX_RATE_BUCKETS}`, [{ path: "bucket_seconds", message: `at least ${Math.ceil((until - since) / 1000 / MAX_RATE_BUCKETS)} for this range` }]);
  }
  const params: unknown[] = [new Date(since).toISOString(), new Date(until).toISOString(), q.bucket_seconds, EventType.AgentRegistered, EventType.AgentDeregistered];
  const tenantSql = tenant === null ? "tenant IS NULL" : (params.push(tenant), `(tenant IS NULL OR tenant = $${params.length})`);
  const sql = `
    SELECT floor(extract(epoch FROM time - $1::timestamptz) / $3)::int AS bucket,
           count(*) FILTER (WHERE type = $4) AS registered,
           count(*) FILTER (WHERE type = $5) AS deregistered,
           count(*) FILTER (WHERE type = $5 AND event->'data'->>'reason' = 'evicted') AS evicted
      FROM audit_events
     WHERE time >= $1::timestamptz AND time < $2::timestamptz AND type IN ($4, $5) AND ${tenantSql}
     GROUP BY bucket ORDER BY bucket`;
  const { rows, mirrored } = await readMirrored<{ bucket: number; registered: string; deregistered: string; evicted: string }>(source, sql, params);
  const buckets: RateBucket[] = rows.map((r) => ({
    start: new Date(since + r.bucket * q.bucket_seconds * 1000).toISOString(),
    registered: Number(r.registered),
    deregistered: Number(r.deregistered),
    evicted: Number(r.evicted),
  }));
  const reply: HistoryRatesReply = {
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    bucket_seconds: q.bucket_seconds,
    buckets,
    mirrored_seq: mirrored,
    stream_last_seq: Math.max(await source.streamLastSeq(), mirrored),
  };
  // Only buckets with events are sent, each about 100 bytes: 1,000 fit a 1 MiB max_payload, not a 64 KiB one.
  if (Buffer.byteLength(JSON.stringify(reply)) > source.maxPayload() - REPLY_OVERHEAD_BYTES) {
    throw new RegistryError(ErrorCode.LimitExceeded, `history_rates: ${buckets.length} buckets do not fit one reply of this connection; ask for longer buckets (bucket_seconds) or a shorter range`);
  }
  return reply;
}
