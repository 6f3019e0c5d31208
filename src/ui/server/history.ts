/**
 * One agent's history from the audit mirror, when one runs: a plain request to
 * `<prefix>.history` (the mirror is a separate process and its op is its own contract). No
 * responder, a timeout or an error reply all mean "no history here"; the page then shows the
 * recent events of the stream instead.
 */
import { errors, type NatsConnection } from "@nats-io/nats-core";
import type { HistoryReply as HistoryPage } from "../shared.js";

/** Bytes of a mirror's reply the page takes; a larger one is refused rather than relayed. */
const MAX_REPLY_BYTES = 4 * 1024 * 1024;

export async function requestHistory(
  nc: NatsConnection,
  prefix: string,
  query: { agent_type?: string; cursor?: string; limit: number },
  timeoutMs: number,
): Promise<HistoryPage> {
  let data: Uint8Array;
  try {
    const msg = await nc.request(`${prefix}.history`, JSON.stringify(query), { timeout: timeoutMs });
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
    const body = JSON.parse(new TextDecoder().decode(data)) as { events?: unknown; next_cursor?: unknown };
    if (!Array.isArray(body.events)) return { available: false, reason: "the audit mirror's reply has no events" };
    const events = body.events.filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null);
    return { available: true, events, next_cursor: typeof body.next_cursor === "string" ? body.next_cursor : null };
  } catch {
    return { available: false, reason: "the audit mirror's reply is not JSON" };
  }
}
