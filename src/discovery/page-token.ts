/**
 * The front's page tokens, each bound to the query it came from (a digest), so a token given
 * with another query is refused rather than skipping into an unrelated list: the `pageToken` of
 * `POST /search` (the offset of the next page in the ranked, filtered set, computed again for
 * each page from the registry's current view, so a fleet that changed between pages can shift
 * it), and the codec the MCP servers' cursor and filtered `GET /agents` share.
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

/**
 * A token of this front's: its fields and the digest of the query it was issued for, as
 * base64url JSON. Every paged answer of the front (search, the MCP servers, filtered agents)
 * binds its position so.
 */
export function encodeBoundToken(fields: Record<string, unknown>, digest: string): string {
  return Buffer.from(JSON.stringify({ ...fields, q: digest })).toString("base64url");
}

const MAX_TOKEN_LENGTH = 1024;

/**
 * The fields of a token `encodeBoundToken` issued: 400 INVALID_ARGUMENT naming the parameter
 * (`name`) for one it did not issue, or whose fields `valid` refuses, and, once it is well
 * formed, for one issued for another query (`other` says what changed).
 */
export function decodeBoundToken(token: string, digest: string, name: string, other: string, valid: (fields: Record<string, unknown>) => boolean): Record<string, unknown> {
  const refused = () => invalidArgument(`${name} is not one this registry issued`);
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw refused();
  }
  const fields = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  if (typeof fields["q"] !== "string" || !valid(fields)) throw refused();
  if (fields["q"] !== digest) throw invalidArgument(`${name} belongs to ${other}`);
  return fields;
}

/** A count a token carries: an integer, 0 or more. */
export const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

export function encodePageToken(offset: number, digest: string): string {
  return encodeBoundToken({ o: offset }, digest);
}

/** The offset a token points at; 400 INVALID_ARGUMENT for a token this query did not issue. */
export function decodePageToken(token: string | undefined, digest: string): number {
  if (token === undefined) return 0;
  return decodeBoundToken(token, digest, "pageToken", "another query (text or filter changed)", (f) => isCount(f["o"]))["o"] as number;
}
