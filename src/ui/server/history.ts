/**
 * What the page asks of the audit mirror, when one runs: an agent's history (`<prefix>.history`)
 * and the fleet's rates over a longer range (`<prefix>.history_rates`), plain requests since
 * the mirror is a separate process and its ops are its own contract. No responder, a timeout or
 * an error reply all mean "not available here", with the reason the page shows; for history
 * the page then shows the recent events of the stream instead.
 */
import { errors, type NatsConnection } from "@nats-io/nats-core";
import type { HistoryReply as HistoryPage, RatesReply } from "../shared.js";

/** Bytes of a mirror's reply the page takes; a larger one is refused rather than relayed. */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;

type Answer = { available: true; body: Record<string, unknown> } | { available: false; reason: string };

async function askMirror(nc: NatsConnection, subject: string, query: object, timeoutMs: number): Promise<Answer> {
  let data: Uint8Array;
  try {
    const msg = await nc.request(subject, JSON.stringify(query), { timeout: timeoutMs });
    const code = msg.headers?.get("Nats-Service-Error-Code");
    if (code) return { available: false, reason: `the audit mirror answered ${code}: ${msg.headers?.get("Nats-Service-Error") ?? ""}` };
    data = msg.data;
  } catch (e) {
    if (e instanceof errors.NoRespondersError || (e instanceof Error && e.cause instanceof errors.NoRespondersError)) {
      return { available: false, reason: "no audit mirror running" };
    }
    if (e instanceof errors.TimeoutError || (e instanceof Error && e.cause instanceof errors.TimeoutError)) {
      return { available: false, reason: "the audit mirror did not answer in time" };
    }
    return { available: false, reason: `no audit mirror running (${(e as Error).message})` };
  }
  if (data.length > MAX_REPLY_BYTES) return { available: false, reason: "the audit mirror's reply is too large" };
  try {
    const body: unknown = JSON.parse(new TextDecoder().decode(data));
    if (typeof body !== "object" || body === null || Array.isArray(body)) return { available: false, reason: "the audit mirror's reply is not an object" };
    return { available: true, body: body as Record<string, unknown> };
  } catch {
    return { available: false, reason: "the audit mirror's reply is not JSON" };
  }
}

export async function requestHistory(
  nc: NatsConnection,
  prefix: string,
  query: { agent_type?: string; cursor?: string; limit: number },
  timeoutMs: number,
): Promise<HistoryPage> {
  const answer = await askMirror(nc, `${prefix}.history`, query, timeoutMs);
  if (!answer.available) return answer;
  const { events, next_cursor } = answer.body;
  if (!Array.isArray(events)) return { available: false, reason: "the audit mirror's reply has no events" };
  return {
    available: true,
    events: events.filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null),
    next_cursor: typeof next_cursor === "string" ? next_cursor : null,
  };
}

/** The chart ranges beyond the last hour, and the bucket each is counted in (under 100 points a chart). */
export const RATE_RANGES: Readonly<Record<string, { ms: number; bucketSeconds: number }>> = {
  "24h": { ms: 24 * 3_600_000, bucketSeconds: 900 },
  "7d": { ms: 7 * 24 * 3_600_000, bucketSeconds: 7200 },
};

export async function requestRates(nc: NatsConnection, prefix: string, range: string, now: number, timeoutMs: number): Promise<RatesReply> {
  const r = RATE_RANGES[range]!;
  // Buckets aligned to whole bucket lengths, so two loads a minute apart count the same buckets.
  const until = Math.ceil(now / (r.bucketSeconds * 1000)) * r.bucketSeconds * 1000;
  const since = until - r.ms;
  const answer = await askMirror(nc, `${prefix}.history_rates`, { since: new Date(since).toISOString(), until: new Date(until).toISOString(), bucket_seconds: r.bucketSeconds }, timeoutMs);
  if (!answer.available) return answer;
  const { buckets } = answer.body;
  if (!Array.isArray(buckets)) return { available: false, reason: "the audit mirror's reply has no buckets (a mirror older than v1.2?)" };
  const count = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return {
    available: true,
    range,
    since: new Date(since).toISOString(),
    until: new Date(until).toISOString(),
    bucket_seconds: r.bucketSeconds,
    buckets: buckets
      .filter((b): b is Record<string, unknown> => typeof b === "object" && b !== null && typeof (b as { start?: unknown }).start === "string")
      .map((b) => ({ start: b["start"] as string, registered: count(b["registered"]), deregistered: count(b["deregistered"]), evicted: count(b["evicted"]) })),
  };
}
