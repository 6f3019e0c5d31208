/**
 * A string as UTF-8 bytes for a NATS payload. nats.js encodes a string payload with
 * TextEncoder, which gives every payload an ArrayBuffer of its own; Buffer.from cuts a small
 * one from a shared 8 KB pool. On the heartbeat path (a reply and an event per heartbeat,
 * 66,000 payloads a second at a million instances) the separate buffers cost three times the
 * CPU to make and four times the scavenge time to free (issue 20, docs/performance.md).
 */
export function utf8(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}
