/**
 * The `pageToken` of `POST /search`: the offset of the next page in the ranked, filtered set,
 * bound to the query it came from (a digest of text and filter), so a token given with another
 * query is refused rather than skipping into an unrelated list. The set is computed again for
 * each page from the registry's current view: a fleet that changed between pages can shift it.
 */
import { createHash } from "node:crypto";
import { invalidArgument } from "./ard-error.js";
import type { EntryFilter } from "./entry-filter.js";

/** `merged`: the set includes upstream registries' entries (federation `auto`), a different list than this registry's own. */
export function queryDigest(text: string, filter: EntryFilter, merged = false): string {
  const parts: unknown[] = [text, [...filter].map(([k, v]) => [k, [...v].sort()]).sort()];
  if (merged) parts.push("merged");
  const canonical = JSON.stringify(parts);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}

export function encodePageToken(offset: number, digest: string): string {
  return Buffer.from(JSON.stringify({ o: offset, q: digest })).toString("base64url");
}

/** The offset a token points at; 400 INVALID_ARGUMENT for a token this query did not issue. */
export function decodePageToken(token: string | undefined, digest: string): number {
  if (token === undefined) return 0;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw invalidArgument("pageToken is not one this registry issued");
  }
  const { o, q } = (parsed ?? {}) as { o?: unknown; q?: unknown };
  if (typeof o !== "number" || !Number.isInteger(o) || o < 0 || typeof q !== "string") throw invalidArgument("pageToken is not one this registry issued");
  if (q !== digest) throw invalidArgument("pageToken belongs to another query (text or filter changed)");
  return o;
}
