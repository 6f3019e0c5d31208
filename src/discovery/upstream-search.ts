/**
 * ARD federation `auto` (ard-spec section 8): the front asks the upstream registries the
 * operator configured (REGISTRY_DISCOVERY_REFERRALS) the same `POST /search`, and merges their
 * ranked entries with its own. Every upstream is asked at once, with `federation: "none"` (so
 * two registries naming each other cannot ask each other in a loop), and is held to bounds: a
 * deadline, a reply size, no redirect, and a reply that must be ARD's shape. An upstream that
 * fails any of them is left out of the answer and logged; the search itself never fails on it.
 */
import type { EntryFilter } from "./entry-filter.js";
import type { SearchResultItem } from "./discovery-api.js";

export type Upstream = { identifier: string; url: string };
export type UpstreamLimits = {
  /** How long one upstream may take to answer in full. */
  timeoutMs: number;
  /** The largest reply read from one upstream. */
  maxBytes: number;
};
export type UpstreamOutcome = { items: SearchResultItem[]; failures: Array<{ identifier: string; reason: string }> };

/** The most entries taken from one upstream: ARD's largest page. */
export const MAX_UPSTREAM_RESULTS = 100;
const MAX_FIELD_CHARS = 2048;
const MAX_LIST_ITEMS = 64;

/** Where an upstream's search is: its registry URL's `search`, unless the URL names the search endpoint itself. */
export function searchUrlOf(registryUrl: string): URL {
  const url = new URL(registryUrl);
  if (url.pathname.endsWith("/search")) return url;
  return new URL("search", url.href.endsWith("/") ? url.href : `${url.href}/`);
}

/** Asks every upstream at once; resolves when each has answered or failed. */
export async function searchUpstreams(upstreams: readonly Upstream[], text: string, filter: EntryFilter, limits: UpstreamLimits): Promise<UpstreamOutcome> {
  const body = JSON.stringify({ query: { text, ...(filter.size > 0 ? { filter: Object.fromEntries([...filter].map(([k, v]) => [k, [...v]])) } : {}) }, federation: "none", pageSize: MAX_UPSTREAM_RESULTS });
  const result: UpstreamOutcome = { items: [], failures: [] };
  const answers = await Promise.all(
    upstreams.map(async (upstream): Promise<SearchResultItem[]> => {
      try {
        return await searchOne(upstream, body, limits);
      } catch (e) {
        result.failures.push({ identifier: upstream.identifier, reason: (e as Error).message });
        return [];
      }
    }),
  );
  // In the configured order, whatever order they answered in.
  for (const items of answers) result.items.push(...items);
  return result;
}

async function searchOne(upstream: Upstream, body: string, limits: UpstreamLimits): Promise<SearchResultItem[]> {
  const url = searchUrlOf(upstream.url);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body, redirect: "error", signal });
  } catch (e) {
    throw new Error(signal.aborted ? `no answer within ${limits.timeoutMs} ms` : `unreachable (${causeOf(e)})`);
  }
  const text = await boundedText(res, limits.maxBytes, signal);
  if (res.status !== 200) throw new Error(`answered HTTP ${res.status}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error("answered with a body that is not JSON");
  }
  const results = (parsed as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new Error("answered without a results array");
  return results.slice(0, MAX_UPSTREAM_RESULTS).flatMap((r) => entryOf(r, upstream.url) ?? []);
}

/** The reply's text, refused past `maxBytes` without reading the rest. */
async function boundedText(res: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw new Error(`answered with ${declared} bytes; at most ${maxBytes} are read`);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new Error(`answered with more than ${maxBytes} bytes; at most ${maxBytes} are read`);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (signal.aborted) throw new Error("no full answer in time");
    throw e;
  }
  return Buffer.concat(chunks).toString("utf8");
}

const causeOf = (e: unknown): string => {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  return String(cause?.code ?? cause?.message ?? (e as Error).message);
};

const shortString = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_FIELD_CHARS;
const stringList = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter(shortString).slice(0, MAX_LIST_ITEMS) : undefined);

/**
 * One upstream entry as this front serves entries: ARD's catalog entry fields only, each of its
 * type and bounded; `score` clamped to 0..100; `source` the upstream's own when it gives one,
 * else the upstream's registry URL.
 * An entry without an identifier, a type or a URL is dropped.
 */
function entryOf(raw: unknown, registryUrl: string): SearchResultItem | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (!shortString(r["identifier"]) || !shortString(r["type"]) || !shortString(r["url"])) return null;
  const score = typeof r["score"] === "number" && Number.isFinite(r["score"]) ? Math.max(0, Math.min(100, Math.round(r["score"]))) : 0;
  const item: SearchResultItem = {
    identifier: r["identifier"],
    displayName: shortString(r["displayName"]) ? r["displayName"] : r["identifier"],
    type: r["type"],
    url: r["url"],
    score,
    source: shortString(r["source"]) ? r["source"] : registryUrl,
  };
  if (shortString(r["description"])) item.description = r["description"];
  if (shortString(r["version"])) item.version = r["version"];
  if (shortString(r["updatedAt"])) item.updatedAt = r["updatedAt"];
  for (const key of ["tags", "capabilities", "representativeQueries"] as const) {
    const list = stringList(r[key]);
    if (list !== undefined) item[key] = list;
  }
  return item;
}
