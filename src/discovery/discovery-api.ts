/**
 * What the discovery front answers, over the SDK's RegistryClient: the same queries as a NATS
 * client sends (`search` ranks with the registry's one BM25 index; `list`, `get`, `card` and
 * `toolspec` give the rest), shaped as ARD's registry API (ard-spec v0.9, section 7) and
 * ai-catalog.json (section 4). A scope is one view: the shared agents, or a tenant's (shared
 * plus the tenant's own), as the client's tenant says.
 */
import type { RegistryClient } from "../client/registry-client.js";
import { MAX_LIST_AGENT_TYPES, type AgentView } from "../protocol/messages.js";
import { notFound } from "./ard-error.js";
import { A2A_CARD_TYPE, catalogEntry, isMcpKind, parseIdentifier, REGISTRY_TYPE, SHARED_NAMESPACE, type CatalogEntry, type EntryLinks } from "./catalog-entry.js";
import { matchesFilter } from "./entry-filter.js";
import { isApprovedView } from "./approved-view.js";
import { LIVE_STATUSES } from "./registry-scan.js";
import { decodePageToken, encodePageToken, queryDigest } from "./page-token.js";
import type { SearchRequest } from "./search-request.js";
import { searchUpstreams, type UpstreamLimits, type UpstreamOutcome } from "./upstream-search.js";

export type Scope = {
  client: RegistryClient;
  /** The tenant whose view this is; null for the shared agents only. */
  tenant: string | null;
  links: EntryLinks;
  /** The upstream registries a `referrals` search names, and an `auto` search asks (configured). */
  referrals?: readonly { identifier: string; url: string }[];
  /** The bounds on asking upstreams (federation `auto`), and where a failed one is reported; unset: `auto` is `none`. */
  federation?: UpstreamLimits & { onFailure: (failures: UpstreamOutcome["failures"]) => void };
};

export type SearchResultItem = CatalogEntry & { score: number; source: string };
export type RegistryReferral = { identifier: string; displayName: string; type: typeof REGISTRY_TYPE; url: string };
export type SearchResponse = { results: SearchResultItem[]; referrals?: RegistryReferral[]; pageToken?: string };
export type ListResponse = { items: CatalogEntry[]; pageToken?: string };

/** The `search` op's largest `limit`: the ranked set a search pages through is its best 100 capabilities. */
const SEARCH_WINDOW = 100;
/** Views fetched at once for one search: enough to overlap round trips, few enough not to flood the registry. */
const GET_CONCURRENCY = 8;

export const registryUrl = (links: EntryLinks): string => `${links.baseUrl}/`;

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** An agent's view, or undefined when it went away (or is deregistered) since the search ranked it. */
async function liveView(scope: Scope, agentType: string): Promise<AgentView | undefined> {
  try {
    const { agent } = await scope.client.get({ agent_type: agentType, instances_limit: 1 });
    return agent.status === "deregistered" || !isApprovedView(agent) ? undefined : agent;
  } catch (e) {
    if ((e as { code?: unknown }).code === "not_found") return undefined;
    throw e;
  }
}

/**
 * The live views of these agent types, keyed by type, from `list` with `agent_types` (v1.2): one
 * request for up to 100 types where a `get` each took a round trip each. A registry older than
 * v1.2 ignores the field and lists its fleet; a type it answers with that was not asked for
 * says so, and the views are then read one `get` at a time.
 */
async function liveViews(scope: Scope, types: readonly string[]): Promise<Map<string, AgentView>> {
  const views = new Map<string, AgentView>();
  const asked = new Set(types);
  for (let i = 0; i < types.length; i += MAX_LIST_AGENT_TYPES) {
    const batch = types.slice(i, i + MAX_LIST_AGENT_TYPES);
    let cursor: string | null = null;
    do {
      const reply = await scope.client.list({ agent_types: batch, status: [...LIVE_STATUSES], instances_limit: 1, limit: batch.length, ...(cursor ? { cursor } : {}) });
      if (reply.agents.some((a) => !asked.has(a.agent_type))) return liveViewsOneByOne(scope, types);
      for (const agent of reply.agents) if (isApprovedView(agent)) views.set(agent.agent_type, agent);
      cursor = reply.next_cursor;
    } while (cursor);
  }
  return views;
}

async function liveViewsOneByOne(scope: Scope, types: readonly string[]): Promise<Map<string, AgentView>> {
  const views = await mapLimited(types, GET_CONCURRENCY, (type) => liveView(scope, type));
  const byType = new Map<string, AgentView>();
  views.forEach((v) => v && byType.set(v.agent_type, v));
  return byType;
}

/** The views of every agent a text search matches (its best 100 capabilities' agents), in rank order, for Explore's facets. */
export async function searchedEntries(scope: Scope, text: string): Promise<AgentView[]> {
  const reply = await scope.client.search({ query: text, limit: SEARCH_WINDOW });
  const types = [...new Set(reply.results.map((r) => r.agent_type))];
  const views = await liveViews(scope, types);
  return types.flatMap((type) => views.get(type) ?? []);
}

/**
 * `POST /search`: the registry's BM25 ranking of capabilities, folded to agents (an agent's
 * best capability ranks it), scored 0 to 100 against the best match of the query, filtered,
 * then paged by offset. With federation `auto` and upstream registries configured, their
 * entries are merged in by score (upstream-search.ts), asked while the registry ranks.
 */
export async function search(scope: Scope, req: SearchRequest): Promise<SearchResponse> {
  const upstreams = req.federation === "auto" && scope.federation && scope.referrals?.length ? scope.referrals : [];
  const asked = upstreams.length > 0 ? searchUpstreams(upstreams, req.text, req.filter, scope.federation!) : undefined;
  const local = await rankedLocal(scope, req);
  const merged = asked ? mergeUpstream(local, await asked, scope) : local;
  const digest = queryDigest(req.text, req.filter, asked !== undefined);
  const offset = decodePageToken(req.pageToken, digest);
  const page = merged.slice(offset, offset + req.pageSize);
  const unread = page.flatMap((m) => ("type" in m && !m.view ? [m.type] : []));
  const read = unread.length > 0 ? await liveViews(scope, unread) : new Map<string, AgentView>();
  const source = registryUrl(scope.links);
  const results: SearchResultItem[] = [];
  for (const m of page) {
    if ("item" in m) {
      results.push(m.item);
      continue;
    }
    const view = m.view ?? read.get(m.type);
    if (view) results.push({ ...catalogEntry(view, scope.links), score: m.score, source });
  }
  const end = offset + req.pageSize;
  const response: SearchResponse = { results };
  if (req.federation === "referrals") {
    response.referrals = (scope.referrals ?? []).map((r) => ({ identifier: r.identifier, displayName: r.identifier, type: REGISTRY_TYPE, url: r.url }));
  }
  if (end < merged.length) response.pageToken = encodePageToken(end, digest);
  return response;
}

/** A ranked candidate: one of this registry's agents (its view read when the filter needed it) or an upstream's entry. */
type Ranked = { type: string; score: number; view?: AgentView } | { item: SearchResultItem; score: number };

/** This registry's agents for the query, best first, filtered. */
async function rankedLocal(scope: Scope, req: SearchRequest): Promise<Ranked[]> {
  const reply = await scope.client.search({ query: req.text, limit: SEARCH_WINDOW });
  const best = new Map<string, number>();
  for (const r of reply.results) best.set(r.agent_type, Math.max(best.get(r.agent_type) ?? 0, r.score));
  const ranked = [...best].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const top = ranked[0]?.[1] ?? 0;
  const score = (raw: number): number => (top > 0 ? Math.max(0, Math.min(100, Math.round((100 * raw) / top))) : 0);
  if (req.filter.size === 0) return ranked.map(([type, raw]) => ({ type, score: score(raw) }));
  // A filter needs every candidate's entry; the window bounds how many are fetched.
  const views = await liveViews(scope, ranked.map(([type]) => type));
  const matched: Ranked[] = [];
  for (const [type, raw] of ranked) {
    const view = views.get(type);
    if (view && matchesFilter(catalogEntry(view, scope.links), req.filter)) matched.push({ type, score: score(raw), view });
  }
  return matched;
}

/**
 * This registry's ranking with the upstreams' entries merged in by score (each registry scores
 * 0 to 100 against its own best match, so a score is comparable only roughly: ARD defines no
 * better), this registry's first on a tie. An upstream entry of this registry's own publisher
 * (an upstream that lists us) or one already given by an earlier upstream is dropped.
 */
function mergeUpstream(local: Ranked[], outcome: UpstreamOutcome, scope: Scope): Ranked[] {
  if (outcome.failures.length > 0) scope.federation!.onFailure(outcome.failures);
  const ours = `urn:air:${scope.links.publisher}:`;
  const seen = new Set<string>();
  const remote: Ranked[] = [];
  for (const item of outcome.items) {
    if (item.identifier.startsWith(ours) || seen.has(item.identifier)) continue;
    seen.add(item.identifier);
    remote.push({ item, score: item.score });
  }
  remote.sort((a, b) => b.score - a.score);
  const merged: Ranked[] = [];
  let i = 0;
  let j = 0;
  while (i < local.length || j < remote.length) {
    if (j >= remote.length || (i < local.length && local[i]!.score >= remote[j]!.score)) merged.push(local[i++]!);
    else merged.push(remote[j++]!);
  }
  return merged;
}

/** `GET /agents`: the fleet in the registry's `list` order, its cursor as the page token. */
export async function listAgents(scope: Scope, pageSize: number, pageToken: string | undefined): Promise<ListResponse> {
  const reply = await scope.client.list({ status: [...LIVE_STATUSES], limit: pageSize, ...(pageToken ? { cursor: pageToken } : {}) });
  const items = reply.agents.filter(isApprovedView).map((a) => catalogEntry(a, scope.links));
  return reply.next_cursor ? { items, pageToken: reply.next_cursor } : { items };
}

/** One entry by its URN: 404 NOT_FOUND for a URN of another publisher or namespace, or an agent not in this view. */
export async function entryByIdentifier(scope: Scope, urn: string): Promise<CatalogEntry> {
  const parts = parseIdentifier(urn, scope.links.publisher);
  const namespaceHere = parts && (parts.namespace === SHARED_NAMESPACE || parts.namespace === scope.tenant);
  if (!parts || !namespaceHere) throw notFound(`no entry ${JSON.stringify(urn.slice(0, 300))} in this registry`);
  const view = await liveView(scope, parts.agentType);
  const entry = view && catalogEntry(view, scope.links);
  if (!entry || entry.identifier !== urn) throw notFound(`no entry ${JSON.stringify(urn.slice(0, 300))} in this registry`);
  return entry;
}

export type Manifest = {
  specVersion: "1.0";
  host: { displayName: string; identifier: string };
  entries: CatalogEntry[];
};

/**
 * `/.well-known/ai-catalog.json`: the registry itself first (so a crawler finds the search
 * API), then the fleet up to `maxEntries` agents; past that the registry entry is the way in.
 */
export async function manifest(scope: Scope, displayName: string, maxEntries: number): Promise<Manifest> {
  const { publisher } = scope.links;
  const entries: CatalogEntry[] = [
    {
      identifier: `urn:air:${publisher}:registry:${scope.tenant ?? SHARED_NAMESPACE}`,
      displayName,
      type: REGISTRY_TYPE,
      url: registryUrl(scope.links),
      description: "ARD registry API of this fleet: POST search, GET agents (ard-spec v0.9)",
      tags: ["registry", "search"],
    },
  ];
  let cursor: string | undefined;
  do {
    const page = await listAgents(scope, Math.min(500, maxEntries - (entries.length - 1)), cursor);
    entries.push(...page.items);
    cursor = page.pageToken;
  } while (cursor !== undefined && entries.length - 1 < maxEntries);
  return { specVersion: "1.0", host: { displayName, identifier: publisher }, entries };
}

/** The A2A card an A2A entry's url names (the registry's `card` op: A2A v1.0). */
export async function a2aCard(scope: Scope, agentType: string): Promise<object> {
  return (await scope.client.card(agentType)).card;
}

/**
 * The MCP server card an MCP-kind entry's url names, shaped as ard-spec's own example of one
 * (section 4.4: name, description, tools as MCP `tools/list` lists them), plus the version.
 */
export async function mcpServerCard(scope: Scope, agentType: string): Promise<object> {
  const view = await liveView(scope, agentType);
  if (!view) throw notFound(`no agent ${agentType} in this registry`);
  if (!isMcpKind(view.kind)) throw notFound(`${agentType} is not an MCP server; its card is ${A2A_CARD_TYPE} at agent-card.json`);
  const { tools } = await scope.client.toolspec(agentType);
  return { name: view.display_name ?? view.agent_type, description: view.description, version: view.version, tools };
}
