/**
 * The discovery front's JSON replies: a plain one, and a cacheable one (ETag, Cache-Control,
 * 304) for the documents a client fetches again and again. Shared by the ARD and MCP Registry routes.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export const JSON_TYPE = "application/json; charset=utf-8";
/** How long a client may cache an entry, a card or the manifest before asking again (with If-None-Match). */
const MAX_AGE_S = 30;

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": JSON_TYPE, "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A cacheable document: a strong ETag over its bytes, and 304 when the client holds it already. */
export function sendCacheable(req: IncomingMessage, res: ServerResponse, body: unknown, shared: boolean): void {
  const text = JSON.stringify(body);
  const etag = `"${createHash("sha256").update(text).digest("base64url").slice(0, 27)}"`;
  // With a token, a shared cache must not hand one client's answer to another.
  const headers = { ETag: etag, "Cache-Control": `${shared ? "public" : "private"}, max-age=${MAX_AGE_S}` };
  const held = req.headers["if-none-match"];
  if (held !== undefined && held.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { "Content-Type": JSON_TYPE, "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(req.method === "HEAD" ? undefined : text);
}
