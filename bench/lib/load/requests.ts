/**
 * Raw requests of the load process. Bodies are encoded once up front and replies are not
 * parsed (only their error header is read), so the load process spends its CPU on sending,
 * not on JSON, and the measured side is the bottleneck rather than the generator.
 */
import type { Msg, NatsConnection } from "@nats-io/nats-core";

export const enc = new TextEncoder();

/** The error a service reply carries in its headers, or null. */
export function replyError(msg: Msg): string | null {
  const code = msg.headers?.get("Nats-Service-Error-Code");
  return code ? `${code} ${msg.headers?.get("Nats-Service-Error") ?? ""}`.trim() : null;
}

/** Sends a request; resolves to null on a good reply, else the error text (never rejects). */
export async function requestOk(nc: NatsConnection, subject: string, body: Uint8Array, timeoutMs = 10_000): Promise<string | null> {
  try {
    return replyError(await nc.request(subject, body, { timeout: timeoutMs }));
  } catch (e) {
    return (e as Error).message;
  }
}
