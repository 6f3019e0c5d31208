/**
 * The body of ARD's `POST /search` (ard-spec v0.9, section 7.2; ard.openapi.yaml
 * SearchRequest): `query` with a required `text` and an optional `filter`, `federation`,
 * `pageSize` (default 10, at most 100) and `pageToken`. Unknown members are refused, as the
 * OpenAPI document's `additionalProperties: false` says.
 */
import { invalidArgument } from "./ard-error.js";
import { parseFilter, type EntryFilter } from "./entry-filter.js";

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;
/** The registry's `search` op takes at most 1024 characters. */
export const MAX_TEXT_LENGTH = 1024;
const MAX_TOKEN_LENGTH = 512;

/**
 * `auto` (the spec's default) merges in the results of the upstream registries configured
 * (REGISTRY_DISCOVERY_REFERRALS; upstream-search.ts), and is `none` when there are none.
 * `referrals` names those upstreams for the client to follow instead.
 */
export const FEDERATION_MODES = ["auto", "none", "referrals"] as const;
export type Federation = (typeof FEDERATION_MODES)[number];

export type SearchRequest = {
  text: string;
  federation: Federation;
  filter: EntryFilter;
  pageSize: number;
  pageToken: string | undefined;
};

const TOP_KEYS = new Set(["query", "federation", "pageSize", "pageToken"]);
const QUERY_KEYS = new Set(["text", "filter"]);

function unknownKey(obj: Record<string, unknown>, allowed: ReadonlySet<string>, where: string): void {
  const extra = Object.keys(obj).find((k) => !allowed.has(k));
  if (extra !== undefined) throw invalidArgument(`${where}${JSON.stringify(extra.slice(0, 100))} is not a member of the request`);
}

export function parsePageSize(raw: unknown, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 1 || raw > max) throw invalidArgument(`pageSize must be an integer from 1 to ${max}`);
  return raw;
}

export function parsePageToken(raw: unknown): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw !== "string" || raw.length > MAX_TOKEN_LENGTH) throw invalidArgument(`pageToken must be a string of at most ${MAX_TOKEN_LENGTH} characters`);
  return raw;
}

export function parseSearchRequest(body: Record<string, unknown>): SearchRequest {
  unknownKey(body, TOP_KEYS, "");
  const query = body.query;
  if (typeof query !== "object" || query === null || Array.isArray(query)) throw invalidArgument("query is required: an object with text and an optional filter");
  const q = query as Record<string, unknown>;
  unknownKey(q, QUERY_KEYS, "query.");
  if (typeof q.text !== "string" || q.text.trim() === "") throw invalidArgument("query.text is required: a non-empty string");
  if (q.text.length > MAX_TEXT_LENGTH) throw invalidArgument(`query.text is ${q.text.length} characters; at most ${MAX_TEXT_LENGTH}`);
  const federation = body.federation ?? "auto";
  if (!(FEDERATION_MODES as readonly unknown[]).includes(federation)) {
    throw invalidArgument(`federation ${JSON.stringify(federation)} is not one of ${FEDERATION_MODES.join(", ")}`);
  }
  return {
    text: q.text,
    federation: federation as Federation,
    filter: parseFilter(q.filter),
    pageSize: parsePageSize(body.pageSize, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    pageToken: parsePageToken(body.pageToken),
  };
}
