/**
 * ARD's `POST /explore` (ard-spec v0.9, section 7.3): facet counts over the matched set of a
 * query, where `text` and `filter` are both optional. The matched set is that of `POST /search`
 * with text (its best 100 capabilities' agents), else the whole view, read through `list` up
 * to EXPLORE_MAX_ENTRIES agents; the reply says nothing beyond them, so a larger fleet is
 * counted on its first EXPLORE_MAX_ENTRIES in `list` order (docs/discovery.md).
 */
import { invalidArgument } from "./ard-error.js";
import { catalogEntry, type CatalogEntry } from "./catalog-entry.js";
import { matchesFilter, parseFilter, valuesAt, FILTER_PATHS, type EntryFilter } from "./entry-filter.js";
import { listAgents, searchedEntries, type Scope } from "./discovery-api.js";
import { MAX_TEXT_LENGTH } from "./search-request.js";

export const EXPLORE_MAX_ENTRIES = 10_000;
const MAX_FACETS = FILTER_PATHS.length;
const DEFAULT_BUCKETS = 20;
const MAX_BUCKETS = 100;

type FacetRequest = { field: string; limit: number; minCount: number };
export type ExploreRequest = { text: string | undefined; filter: EntryFilter; facets: FacetRequest[] };
export type FacetResult = { buckets: Array<{ value: string; count: number }>; otherCount?: number };
export type ExploreResponse = { resultType: "facets"; facets: Record<string, FacetResult> };

const KNOWN_PATHS: ReadonlySet<string> = new Set(FILTER_PATHS);

function positiveInt(raw: unknown, fallback: number, min: number, max: number, what: string): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < min || raw > max) throw invalidArgument(`${what} must be an integer from ${min} to ${max}`);
  return raw;
}

function onlyKeys(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const extra = Object.keys(obj).find((k) => !allowed.includes(k));
  if (extra !== undefined) throw invalidArgument(`${where}${JSON.stringify(extra.slice(0, 100))} is not a member of the request`);
}

/** The body of `POST /explore`: `resultType.facets` required, `query` optional (ard.openapi.yaml ExploreRequest). */
export function parseExploreRequest(body: Record<string, unknown>): ExploreRequest {
  onlyKeys(body, ["query", "resultType"], "");
  const query = body.query ?? {};
  if (typeof query !== "object" || query === null || Array.isArray(query)) throw invalidArgument("query must be an object with an optional text and filter");
  const q = query as Record<string, unknown>;
  onlyKeys(q, ["text", "filter"], "query.");
  if (q.text !== undefined && (typeof q.text !== "string" || q.text.trim() === "" || q.text.length > MAX_TEXT_LENGTH)) {
    throw invalidArgument(`query.text must be a non-empty string of at most ${MAX_TEXT_LENGTH} characters`);
  }
  const resultType = body.resultType;
  const facets = typeof resultType === "object" && resultType !== null ? (resultType as Record<string, unknown>).facets : undefined;
  if (!Array.isArray(facets) || facets.length === 0 || facets.length > MAX_FACETS) throw invalidArgument(`resultType.facets is required: 1 to ${MAX_FACETS} facets`);
  const seen = new Set<string>();
  const parsed = facets.map((raw, i): FacetRequest => {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalidArgument(`resultType.facets.${i} must be an object with a field`);
    const f = raw as Record<string, unknown>;
    onlyKeys(f, ["field", "limit", "minCount"], `resultType.facets.${i}.`);
    if (typeof f.field !== "string" || !KNOWN_PATHS.has(f.field)) throw invalidArgument(`resultType.facets.${i}.field must be one of ${FILTER_PATHS.join(", ")}`);
    if (seen.has(f.field)) throw invalidArgument(`resultType.facets names ${f.field} twice`);
    seen.add(f.field);
    return { field: f.field, limit: positiveInt(f.limit, DEFAULT_BUCKETS, 1, MAX_BUCKETS, `resultType.facets.${i}.limit`), minCount: positiveInt(f.minCount, 1, 1, EXPLORE_MAX_ENTRIES, `resultType.facets.${i}.minCount`) };
  });
  return { text: q.text as string | undefined, filter: parseFilter(q.filter), facets: parsed };
}

/** Counts, per facet, the matched entries holding each value (an entry counts once per value it holds). */
export function countFacets(entries: readonly CatalogEntry[], facets: readonly FacetRequest[]): Record<string, FacetResult> {
  const out: Record<string, FacetResult> = {};
  for (const facet of facets) {
    const counts = new Map<string, number>();
    for (const entry of entries) for (const value of new Set(valuesAt(entry, facet.field))) counts.set(value, (counts.get(value) ?? 0) + 1);
    const sorted = [...counts].filter(([, n]) => n >= facet.minCount).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const result: FacetResult = { buckets: sorted.slice(0, facet.limit).map(([value, count]) => ({ value, count })) };
    if (sorted.length > facet.limit) result.otherCount = sorted.slice(facet.limit).reduce((sum, [, n]) => sum + n, 0);
    out[facet.field] = result;
  }
  return out;
}

export async function explore(scope: Scope, req: ExploreRequest): Promise<ExploreResponse> {
  let entries: CatalogEntry[];
  if (req.text !== undefined) {
    entries = (await searchedEntries(scope, req.text)).map((v) => catalogEntry(v, scope.links));
  } else {
    entries = [];
    let cursor: string | undefined;
    do {
      // Large pages: fewer round trips for the same bounded walk (the registry sizes them to its replies).
      const page = await listAgents(scope, 500, cursor);
      entries.push(...page.items);
      cursor = page.pageToken;
    } while (cursor !== undefined && entries.length < EXPLORE_MAX_ENTRIES);
  }
  const matched = entries.slice(0, EXPLORE_MAX_ENTRIES).filter((e) => matchesFilter(e, req.filter));
  return { resultType: "facets", facets: countFacets(matched, req.facets) };
}
