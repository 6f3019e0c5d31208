/**
 * The query of the MCP Registry's `GET /v0.1/servers` (openapi.yaml): `cursor`, `limit`,
 * `search`, `version` and `updated_since`, each checked here so that every bad value is a 400
 * naming it, before any registry query is sent. Unknown and repeated parameters are refused
 * too: a misspelt filter answered as "no filter" would be a silent wrong answer.
 *
 * The cursor is this front's: where the scan of the registry's `list` (kind `mcp_server`)
 * stopped, as the registry's own cursor of the page and the items of that page already read,
 * bound to the filters it was issued for (as page-token.ts binds ARD's search tokens).
 */
import { createHash } from "node:crypto";
import { invalidArgument } from "./ard-error.js";
import { decodeBoundToken, encodeBoundToken, isCount } from "./page-token.js";
import type { ScanPosition } from "./registry-scan.js";

export const DEFAULT_SERVER_LIMIT = 30;
export const MAX_SERVER_LIMIT = 100;
/** server.schema.json: a version is at most 255 characters. */
const MAX_VERSION_LENGTH = 255;
const MAX_SEARCH_LENGTH = 200;
const PARAMETERS = ["cursor", "limit", "search", "version", "updated_since"] as const;
/** RFC 3339 date-time (the spec's `format: date-time`): a date, `T`, a time, and an offset or `Z`. */
const RFC3339_RE = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;


export type ServerQuery = {
  limit: number;
  /** Lower-cased; kept when the server name holds it. */
  search: string | undefined;
  /** An exact version; undefined for none or `latest` (every record served is its server's latest). */
  version: string | undefined;
  /** Milliseconds since the epoch; kept when updatedAt (the spec's last change) is after it. */
  updatedSince: number | undefined;
  start: ScanPosition;
};

function filterDigest(search: string | undefined, version: string | undefined, updatedSince: number | undefined): string {
  return createHash("sha256").update(JSON.stringify([search ?? null, version ?? null, updatedSince ?? null])).digest("base64url").slice(0, 16);
}

export function encodeServerCursor(position: ScanPosition, query: Pick<ServerQuery, "search" | "version" | "updatedSince">): string {
  return encodeBoundToken({ c: position.cursor, s: position.skip }, filterDigest(query.search, query.version, query.updatedSince));
}

function decodeServerCursor(token: string, digest: string): ScanPosition {
  const other = "other filters (search, version or updated_since changed)";
  const { c, s } = decodeBoundToken(token, digest, "cursor", other, (f) => (f["c"] === null || typeof f["c"] === "string") && isCount(f["s"]));
  return { cursor: c as string | null, skip: s as number };
}

function single(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw invalidArgument(`${name} is given ${values.length} times; give it once`);
  return values[0];
}

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_SERVER_LIMIT;
  const limit = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= MAX_SERVER_LIMIT)) throw invalidArgument(`limit must be an integer from 1 to ${MAX_SERVER_LIMIT}, not ${JSON.stringify(raw.slice(0, 20))}`);
  return limit;
}

export function parseUpdatedSince(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = RFC3339_RE.test(raw) ? Date.parse(raw.toUpperCase()) : NaN;
  if (!Number.isFinite(ms)) throw invalidArgument(`updated_since must be an RFC 3339 date-time such as 2025-08-07T13:15:04.280Z, not ${JSON.stringify(raw.slice(0, 40))}`);
  return ms;
}

export function parseServerQuery(params: URLSearchParams): ServerQuery {
  const unknown = [...new Set(params.keys())].find((k) => !(PARAMETERS as readonly string[]).includes(k));
  if (unknown !== undefined) throw invalidArgument(`${JSON.stringify(unknown.slice(0, 100))} is not a parameter of GET /v0.1/servers (${PARAMETERS.join(", ")})`);
  const limit = parseLimit(single(params, "limit"));
  const searchText = single(params, "search");
  if (searchText !== undefined && searchText.length > MAX_SEARCH_LENGTH) throw invalidArgument(`search is ${searchText.length} characters; at most ${MAX_SEARCH_LENGTH}`);
  const search = searchText === undefined || searchText === "" ? undefined : searchText.toLowerCase();
  const versionText = single(params, "version");
  if (versionText !== undefined && (versionText === "" || versionText.length > MAX_VERSION_LENGTH)) {
    throw invalidArgument(`version must be "latest" or an exact version of 1 to ${MAX_VERSION_LENGTH} characters`);
  }
  const version = versionText === "latest" ? undefined : versionText;
  const updatedSince = parseUpdatedSince(single(params, "updated_since"));
  const cursorText = single(params, "cursor");
  const start = cursorText === undefined || cursorText === "" ? { cursor: null, skip: 0 } : decodeServerCursor(cursorText, filterDigest(search, version, updatedSince));
  return { limit, search, version, updatedSince, start };
}
