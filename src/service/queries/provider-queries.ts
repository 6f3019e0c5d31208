/**
 * The queries that offer providers (PROTOCOL.md section 2): `lookup`, `capabilities`, `route`,
 * `find`, `search` and `discover`. Each offers an agent only when `offeredTo` says so
 * (domain/query/filters.ts), and in regional mode answers for every region its `scope` asks for
 * (regional-queries.ts).
 */
import semver from "semver";
import { decodeCursor, indexAfter, nextCursor, takePage, type Page, type PageLimits } from "../../domain/query/page.js";
import { AGENT_TYPE_RE, CAPABILITY_RE } from "../../protocol/ids.js";
import type { CapabilityEntry } from "../../protocol/messages.js";
import { agentView, compareProviders, lookupProvider, withDeprecatedMarks } from "../../domain/query/agent-view.js";
import { discover, find, type DiscoveredAgent } from "../../domain/query/discovery.js";
import { isReadOnly, offeredTo, ofKind } from "../../domain/query/filters.js";
import { capabilitiesQuery, discoverQuery, findQuery, lookupQuery, routeQuery, searchQuery, type DiscoverQuery, type LookupQuery, type SearchQuery } from "../../domain/messages.js";
import { AgentStatus, type AgentState } from "../../domain/model/model.js";
import { route } from "../../domain/query/routing.js";
import type { Capability } from "../../domain/spec/spec.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { SearchResult } from "../../domain/query/search.js";
import { invalidRequest } from "../../domain/errors.js";
import { SerializedReply } from "./serialized-reply.js";
import { REGION_FIELDS_BYTES, inScope, regionFields, regionalMatches, regionalRoute, routeOrNull, type Match, type RegionReadings } from "./regional-queries.js";
import { defineQuery, type QueryContext, type Tenant } from "./query-entry.js";

/** A cursor that is a position in an ordered list (lookup's, and regional pages'). */
const OFFSET_RE = /^[1-9][0-9]{0,9}$/;

/** Where a positional cursor continues; the start without one. */
function offsetOf(cursor: string | null | undefined): number {
  return cursor ? Number(decodeCursor(cursor, OFFSET_RE)) : 0;
}

/**
 * One page of a list with no key of its own order (a lookup's providers, a regional page's
 * entries, where an agent type may come from several regions): its cursor is a position in
 * it, in the filtered order, so the same filters must come with it.
 */
function positionalPage<T, R>(ordered: readonly T[], offset: number, render: (item: T, bytesLeft: number) => R, limits: PageLimits, bytesOf?: (r: R) => number): Page<R> {
  return takePage(
    ordered.slice(offset).map((item, i) => ({ item, at: offset + i + 1 })),
    ({ at }) => String(at),
    ({ item }, bytesLeft) => render(item, bytesLeft),
    limits,
    bytesOf,
  );
}

/** The lookup's `version` must be a semver range (a rule zod does not state). */
export function checkVersionRange(q: Pick<LookupQuery, "version">): void {
  if (q.version !== undefined && semver.validRange(q.version) === null) {
    throw invalidRequest(`version ${JSON.stringify(q.version)} is not a semver range`, [{ path: "version", message: "not a semver range" }]);
  }
}

/** lookup, capabilities, route, find, search and discover: their bodies and answers. */
export const providerQueries = {
  lookup: defineQuery({
    body: lookupQuery,
    check: checkVersionRange,
    answer(q, tenant, at, data) {
      const offset = offsetOf(q.cursor);
      // Regional mode: other regions' views change without this view's listeners; never cached.
      const regional = at.regions();
      if (regional !== null) {
        const all = regionalMatches(q.scope, regional, at.home, (view) => lookupMatches(view, q, tenant));
        return lookupReply(at, q, all, offset, (m) => JSON.stringify({ ...lookupProvider(m.agent, at.resolution.capability(m.cap)), ...regionFields(m) }));
      }
      const key = JSON.stringify([tenant, q.capability, q.status ?? null, q.version ?? null, q.kind ?? null, q.read_only === true, q.verified_only === true, q.limit ?? null, offset]);
      // Only a request that needs no wait gets an alias: cachedLookup must never answer one that waits.
      if (q.min_revision === undefined) at.rememberLookup(data, tenant, key);
      const cached = at.lookupCache.get(key);
      if (cached !== undefined) return cached;
      const matches = lookupMatches(at.view, q, tenant).sort(compareProviders);
      // Each provider serialized once, where the page measures it, and the reply joined from
      // those: a lookup the cache does not hold serialized every schema twice (docs/performance.md).
      const reply = lookupReply(at, q, matches, offset, (m) => JSON.stringify(lookupProvider(m.agent, at.resolution.capability(m.cap))));
      at.lookupCache.set(key, q.capability, reply);
      return reply;
    },
  }),

  capabilities: defineQuery({
    body: capabilitiesQuery,
    answer(q, tenant, at) {
      const statuses = new Set<string>(q.status ?? [AgentStatus.Ready]);
      const names = at.view.sortedCapabilityNames();
      const start = q.cursor ? indexAfter(names, decodeCursor(q.cursor, CAPABILITY_RE)) : 0;
      const withSchemas = q.schemas !== false;
      const page = takePage(
        names.slice(start),
        (name) => name,
        (name) => {
          const matches: Array<{ agent: AgentState; cap: Capability }> = [];
          for (const type of at.view.providersOf(name)) {
            const agent = at.view.get(type);
            if (!agent || !statuses.has(agent.status) || !offeredTo(agent, tenant)) continue;
            const cap = agent.spec.capabilities.find((c) => c.name === name);
            if (cap) matches.push({ agent, cap });
          }
          if (matches.length === 0) return null;
          matches.sort(compareProviders);
          const best = matches[0]!.cap;
          const entry: CapabilityEntry = { name, description: best.description, providers: matches.map((m) => m.agent.agent_type) };
          if (withSchemas) {
            entry.input_schema = at.resolution.schema(best.input_schema);
            entry.output_schema = at.resolution.schema(best.output_schema);
          }
          return entry;
        },
        { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: at.listBytes() },
      );
      return { capabilities: page.items, next_cursor: nextCursor(page.next_cursor) };
    },
  }),

  route: defineQuery({
    body: routeQuery,
    answer(q, tenant, at) {
      const regional = at.regions();
      if (regional === null) return route(at.index, q, tenant);
      // A bad request, or no route in any region, is answered as the home region would answer it.
      const routed = regionalRoute(q.scope, regional, at.home, (index) => routeOrNull(index, q, tenant));
      return routed ?? route(at.index, q, tenant);
    },
  }),

  find: defineQuery({
    body: findQuery,
    answer(q, tenant, at) {
      const regional = at.regions();
      if (regional !== null) {
        const ordered = inScope(q.scope, regional, at.home, (region) => find(region.index, q, tenant).map((agent) => ({ agent })), (a, b) => (a.agent.agent_type < b.agent.agent_type ? -1 : a.agent.agent_type > b.agent.agent_type ? 1 : 0));
        // An agent type may be in several regions, so a regional page's cursor is a position.
        const page = positionalPage(ordered, offsetOf(q.cursor), (m, bytesLeft) => ({ ...agentView(m.agent, { maxBytes: bytesLeft - REGION_FIELDS_BYTES }), ...regionFields(m) }), {
          limit: q.limit ?? Number.POSITIVE_INFINITY,
          maxBytes: at.listBytes(),
        });
        return { agents: page.items, next_cursor: nextCursor(page.next_cursor) };
      }
      const after = q.cursor ? decodeCursor(q.cursor, AGENT_TYPE_RE) : undefined;
      const found = find(at.index, q, tenant);
      const from = after === undefined ? 0 : indexAfter(found.map((a) => a.agent_type), after);
      const page = takePage(found.slice(from), (a) => a.agent_type, (a, bytesLeft) => agentView(a, { maxBytes: bytesLeft }), {
        limit: q.limit ?? Number.POSITIVE_INFINITY,
        maxBytes: at.listBytes(),
      });
      return { agents: page.items, next_cursor: nextCursor(page.next_cursor) };
    },
  }),

  search: defineQuery({
    body: searchQuery,
    /**
     * Waits until the search index holds what the view holds, so the reply reflects its revision.
     * The first search starts the indexing; it runs in slices between which other requests are
     * answered. Regional mode: every region's search index (a region out of scope is cheap to bring along).
     */
    async ready(at) {
      for (const indexer of [at.home.search, ...(at.regions()?.remote.map((r) => r.search) ?? [])]) {
        for (let pending = indexer.caughtUp(); pending; pending = indexer.caughtUp()) await pending;
      }
    },
    answer(q, tenant, at) {
      const regional = at.regions();
      if (regional !== null) {
        const ranked = inScope(q.scope, regional, at.home, (region) => searchIn(region, q, tenant), (a, b) => b.score - a.score);
        return { results: ranked.slice(0, q.limit ?? 10).map(({ region, stale, ...r }) => ({ ...r, ...regionFields({ region, stale }) })) };
      }
      return { results: searchIn(at.home, q, tenant) };
    },
  }),

  discover: defineQuery({
    body: discoverQuery,
    answer(q, tenant, at) {
      const regional = at.regions();
      if (regional !== null) {
        const ordered = inScope(q.scope, regional, at.home, (region) => discovered(region.view, q, tenant, undefined), (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        // Agent types repeat across regions, so a regional page's cursor is a position, as lookup's.
        const page = positionalPage(ordered, offsetOf(q.cursor), ({ region, stale, ...entry }) => ({ ...entry, ...regionFields({ region, stale }) }), {
          limit: q.limit ?? Number.POSITIVE_INFINITY,
          maxBytes: at.listBytes(),
        });
        return { agents: page.items, next_cursor: nextCursor(page.next_cursor) };
      }
      const after = q.cursor ? decodeCursor(q.cursor, AGENT_TYPE_RE) : undefined;
      const page = takePage(discovered(at.view, q, tenant, after), (d) => d.id, (d) => d, {
        limit: q.limit ?? Number.POSITIVE_INFINITY,
        maxBytes: at.listBytes(),
      });
      return { agents: page.items, next_cursor: nextCursor(page.next_cursor) };
    },
  }),
};

/** The providers of `q.capability` in `view` that pass the lookup's filters, unordered. */
function lookupMatches(view: RegistryView, q: LookupQuery, tenant: Tenant): Match[] {
  const statuses = new Set<string>(q.status ?? [AgentStatus.Ready]);
  const matches: Match[] = [];
  for (const type of view.providersOf(q.capability)) {
    const agent = view.get(type);
    if (!agent || !statuses.has(agent.status) || !ofKind(agent, q.kind) || !offeredTo(agent, tenant, q.verified_only)) continue;
    if (q.version !== undefined && !semver.satisfies(agent.spec.version, q.version, { includePrerelease: true })) continue;
    const cap = agent.spec.capabilities.find((c) => c.name === q.capability);
    if (cap && (q.read_only !== true || isReadOnly(cap))) matches.push({ agent, cap });
  }
  return matches;
}

/** One page of ordered providers, serialized (positionalPage). */
function lookupReply<M>(at: QueryContext, q: LookupQuery, ordered: M[], offset: number, serialize: (m: M) => string): SerializedReply {
  const page = positionalPage(ordered, offset, (m) => serialize(m), { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: at.listBytes() }, (text: string) => Buffer.byteLength(text));
  return new SerializedReply(`{"capability":${JSON.stringify(q.capability)},"providers":[${page.items.join(",")}],"next_cursor":${JSON.stringify(nextCursor(page.next_cursor))}`);
}

/** One region's search results for `q`, best first (BM25 over that region's agents). */
function searchIn(at: RegionReadings, q: SearchQuery, tenant: Tenant): SearchResult[] {
  const results = at.search.index.query(
    q.query,
    q.limit ?? 10,
    (type) => {
      const agent = at.view.get(type);
      return agent !== undefined && agent.status !== AgentStatus.Deregistered && offeredTo(agent, tenant, q.verified_only) && ofKind(agent, q.kind);
    },
    { readOnly: q.read_only },
  );
  return withDeprecatedMarks(results, (type) => at.view.get(type));
}

/** The discover entries of `view` that `tenant` sees, after the agent type `after` when given, ordered by id. */
function discovered(view: RegistryView, q: DiscoverQuery, tenant: Tenant, after: string | undefined): DiscoveredAgent[] {
  const candidates = q.capability !== undefined ? [...view.providersOf(q.capability)].map((t) => view.get(t)!) : view.all();
  const visible = [...candidates].filter((a) => a !== undefined && (after === undefined || a.agent_type > after) && offeredTo(a, tenant, q.verified_only));
  return discover(visible, q.capability, q.kind);
}
