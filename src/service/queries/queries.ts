/**
 * The query use cases of PROTOCOL.md section 2, answered from this replica's view and its
 * indexes (no store round trip). Every answer carries the revision it reflects; a query with
 * `min_revision` is checked first, then waits (up to 2 s, among a bounded number of waiters)
 * for the view to reach it, else `stale_view`.
 */
import { DEFAULT_MAX_PAYLOAD } from "../../kit/nats-limits.js";
import semver from "semver";
import { AgentIndex } from "../../domain/query/agent-index.js";
import { decodeCursor, encodeCursor, indexAfter, takePage } from "../../domain/query/page.js";
import { AGENT_TYPE_RE, CAPABILITY_RE, INSTANCE_ID_RE } from "../../protocol/ids.js";
import type { CapabilityEntry } from "../../protocol/messages.js";
import { agentView, compareProviders, lookupProvider } from "../../domain/query/agent-view.js";
import { discover, find, type DiscoveredAgent } from "../../domain/query/discovery.js";
import { isReadOnly, offeredTo, ofKind } from "../../domain/query/filters.js";
import { ErrorCode, RegistryError, limitExceeded, notFound } from "../../domain/errors.js";
import {
  capabilitiesQuery,
  cardQuery,
  checkQuery,
  graphQuery,
  sbomQuery,
  toolspecQuery,
  discoverQuery,
  type DiscoverQuery,
  type SearchQuery,
  findQuery,
  getQuery,
  listQuery,
  lookupQuery,
  type LookupQuery,
  routeQuery,
  schemaQuery,
  schemasQuery,
  searchQuery,
} from "../../domain/messages.js";
import { SchemaResolution } from "./schema-resolution.js";
import { getSchema, listSchemas } from "./schema-queries.js";
import { AgentStatus, visibleTo, type AgentState } from "../../domain/model/model.js";
import { route } from "../../domain/query/routing.js";
import type { Capability } from "../../domain/spec/spec.js";
import { parseMessage } from "../../domain/messages.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { QueryOp } from "../../protocol/subjects.js";
import { LookupCache } from "./lookup-cache.js";
import { SerializedReply } from "./serialized-reply.js";
import { REGION_FIELDS_BYTES, inScope, regionFields, regionalMatches, regionalRoute, routeOrNull, type Match, type RegionReadings, type RegionalViews } from "./regional-queries.js";
import { exportCard } from "../../domain/interop/a2a/index.js";
import type { CardSigner } from "../../domain/trust/card-signer.js";
import { exportToolspec } from "../../domain/interop/mcp/index.js";
import { checkQueryBody, checkVersionRange } from "./query-bodies.js";
import { InlinePayloadChecks, type PayloadChecks } from "./payload-checks.js";
import type { RevisionWait } from "../view/revision-waiters.js";
import { SearchIndexer } from "../view/search-indexer.js";
import type { SearchResult } from "../../domain/query/search.js";
import { dependencyGraph, withFileWarnings } from "../../domain/graph/graph-query.js";
import type { FileProblem } from "../../domain/spec/registry-v2/problems.js";
import { sbomDocument } from "../../domain/sbom/sbom-document.js";
import { fleetDocumentFloor } from "../../domain/sbom/fleet-document-floor.js";
import { randomUUID } from "node:crypto";
import { packageVersion } from "../../version.js";
import type { Logger } from "../../kit/logger.js";
import { isRoutable } from "../../domain/trust/approval-policy.js";

export const MIN_REVISION_WAIT_MS = 2000;
/**
 * Bytes a reply keeps free for what surrounds its list (the other fields, next_cursor, the
 * revision): the list itself gets the connection's max_payload less this.
 */
export const REPLY_OVERHEAD_BYTES = 8 * 1024;

type Body = Record<string, unknown>;

/** Lookup requests longer than this are not aliased (real ones are tens of bytes). */
const MAX_ALIASED_REQUEST_BYTES = 1024;
/** Distinct lookup requests remembered (about 10 MB at most). */
const MAX_LOOKUP_ALIASES = 50_000;

/** The tenant and the request's bytes, one char per byte (latin1), so no two byte strings share an alias. */
function aliasOf(data: Uint8Array, tenant: Tenant): string {
  return `${tenant ?? ""}\u0000${Buffer.from(data.buffer, data.byteOffset, data.length).toString("latin1")}`;
}
type Tenant = string | null;

export class QueryService {
  readonly index: AgentIndex;
  /** The search index, built from the first search on, in slices that never hold the event loop long. */
  readonly search: SearchIndexer;
  readonly lookupCache = new LookupCache<SerializedReply>();
  /** Payload validation for the `check` op: in worker threads in the service (payload-checks.ts). */
  private readonly payloads: PayloadChecks;
  /** Capability schemas with their named refs inlined, as lookup, capabilities, toolspec and check use them. */
  readonly resolution: SchemaResolution;
  /** Request bytes (with the tenant) -> lookup cache key, oldest first; see cachedLookup. */
  private readonly lookupAliases = new Map<string, string>();

  /**
   * The connection's real max_payload (the server says it on connect, and a reconnect may land
   * on a server that says otherwise): every list a reply carries is paged to fit it.
   */
  private readonly maxPayload: () => number;
  /** The warnings of the registry file this replica applied last (section 11.3): `graph` reports them. */
  private readonly fileWarnings: () => readonly FileProblem[];
  /** Writes an SBOM document: the costly part of `sbom`, run only for a request admitted. */
  private readonly buildSbom: typeof sbomDocument;
  private readonly cardSigner: CardSigner | undefined;
  private readonly regions: () => RegionalViews | null;

  constructor(
    private readonly view: RegistryView,
    private readonly waitForRevision: (revision: number, timeoutMs: number) => Promise<RevisionWait>,
    opts: {
      log?: Logger;
      maxPayload?: () => number;
      onUnresolvedRef?: () => void;
      fileWarnings?: () => readonly FileProblem[];
      payloads?: PayloadChecks;
      buildSbom?: typeof sbomDocument;
      /** Signs exported cards (REGISTRY_CARD_SIGNING_KEY); none: they go unsigned. */
      cardSigner?: CardSigner;
      /** Regional mode: the other regions' views, once followed; null (or absent) otherwise. */
      regions?: () => RegionalViews | null;
    } = {},
  ) {
    this.buildSbom = opts.buildSbom ?? sbomDocument;
    this.cardSigner = opts.cardSigner;
    this.payloads = opts.payloads ?? new InlinePayloadChecks();
    this.fileWarnings = opts.fileWarnings ?? (() => []);
    this.maxPayload = opts.maxPayload ?? (() => DEFAULT_MAX_PAYLOAD);
    this.regions = opts.regions ?? (() => null);
    this.resolution = new SchemaResolution(view.namedSchemas, {
      onMissing: opts.onUnresolvedRef,
      onProblem: (message, detail) => opts.log?.error(detail, message),
    });
    // A cached lookup may have inlined a schema, or served a ref unresolved: a change drops them all (schema puts are rare).
    view.namedSchemas.onChange(() => {
      this.lookupCache.clear();
      this.lookupAliases.clear();
    });
    this.search = new SearchIndexer((err, agentType) => opts.log?.error({ err, agent_type: agentType }, "search indexing failed; the agent type is left out of search"));
    // Capabilities come from the view's own index: one structure, kept by the view.
    this.index = new AgentIndex(view.capabilityIndex);
    view.addListener(this.index);
    view.addListener(this.search);
    view.addListener(this.lookupCache);
  }

  /**
   * The cached reply to a lookup whose exact bytes (and tenant) were answered before, or
   * undefined. Parsing, validating and keying a lookup cost more than the rest of a cached
   * one, and coordinators send the same few requests again and again (docs/performance.md).
   * Only a request that went the full way once, with no min_revision, gets an alias, so this
   * never answers what the full path would refuse or make wait.
   */
  cachedLookup(data: Uint8Array, tenant: Tenant): Uint8Array | undefined {
    if (data.length > MAX_ALIASED_REQUEST_BYTES) return undefined;
    const key = this.lookupAliases.get(aliasOf(data, tenant));
    const reply = key === undefined ? undefined : this.lookupCache.get(key);
    return reply?.close(this.view.revision);
  }

  /** Runs one query op; the handler table is the single list of what each op does. */
  async run(op: QueryOp, body: Body, tenant: Tenant, data?: Uint8Array): Promise<object | Uint8Array> {
    const minRevision = body["min_revision"];
    if (minRevision !== undefined && !(typeof minRevision === "number" && minRevision <= this.view.revision)) {
      // The whole body first: a bad one is refused at once, never after a wait (issue 14).
      checkQueryBody(op, body);
      await this.reach(minRevision as number);
    }
    if (op === "search") await this.searchCaughtUp(body);
    const revision = this.view.revision;
    const answer = this.handlers[op](body, tenant, data);
    // Only `check` answers later (its validation runs in a worker); the reply says the revision its schema was chosen at.
    const result = answer instanceof Promise ? await answer : answer;
    if (result instanceof SerializedReply) return result.close(revision);
    // A document op answers the document itself, with no field of the registry's beside it.
    if (op === "sbom") return result;
    return { ...result, revision };
  }

  /**
   * Waits until the search index holds what the view holds, so the reply reflects its revision.
   * The first search starts the indexing; it runs in slices between which other requests are
   * answered. A bad body is refused before it waits.
   */
  private async searchCaughtUp(body: Body): Promise<void> {
    // Regional mode: every region's search index (a region out of scope is cheap to bring along).
    for (const indexer of [this.search, ...(this.regions()?.remote.map((r) => r.search) ?? [])]) {
      let pending = indexer.caughtUp();
      if (pending) checkQueryBody("search", body);
      for (; pending; pending = indexer.caughtUp()) await pending;
    }
  }

  /** Waits for the view to apply `minRevision`, else `stale_view`: after 2 s, or at once when too many queries wait already. */
  private async reach(minRevision: number): Promise<void> {
    const outcome = await this.waitForRevision(minRevision, MIN_REVISION_WAIT_MS);
    if (outcome === "full") {
      throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${this.view.revision}; too many queries are waiting for a revision here to wait for min_revision ${minRevision}`);
    }
    if (outcome === "timed_out") {
      throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${this.view.revision}; min_revision ${minRevision} not reached in ${MIN_REVISION_WAIT_MS} ms`);
    }
  }

  private rememberAlias(alias: string, key: string): void {
    if (this.lookupAliases.get(alias) === key) return;
    this.lookupAliases.set(alias, key);
    if (this.lookupAliases.size > MAX_LOOKUP_ALIASES) this.lookupAliases.delete(this.lookupAliases.keys().next().value as string);
  }

  private sbomTooLarge(why: string, oneAgent: boolean): RegistryError {
    // One agent's closure is listed whole, however deep: only a larger max_payload lets it through.
    const advice = oneAgent ? "raise the server's max_payload" : "ask for one agent_type's";
    return limitExceeded(`the SBOM cannot be sent: ${why} more than a reply can carry; ${advice}`, "the connection's max_payload less 8 KiB", this.listBytes());
  }

  /** Bytes the list of one reply may take (the approval gate's pending list pages by it too). */
  listBytes(): number {
    const max = this.maxPayload();
    return max - Math.min(REPLY_OVERHEAD_BYTES, Math.floor(max / 4));
  }

  /** The agent type as `tenant` sees it, else `not_found` (a tenant's agents are invisible to others). */
  private visibleAgent(agentType: string, tenant: Tenant): AgentState {
    const agent = this.view.get(agentType);
    if (!agent || !visibleTo(agent, tenant)) throw notFound(`agent type ${agentType} is not registered`);
    return agent;
  }

  /**
   * The agent type as `visibleAgent` finds it, for exports (`card`, `toolspec`): a spec that
   * waits for an operator's approval, or was rejected, is not exported, so neither the HTTP
   * documents nor the registry's signature on a card vouch for it (docs/trust.md).
   */
  private approvedAgent(agentType: string, tenant: Tenant): AgentState {
    const agent = this.visibleAgent(agentType, tenant);
    if (!isRoutable(agent)) {
      if (agent.trust_lapse?.state === "withheld") {
        throw notFound(`agent type ${agentType}'s spec is withheld: its signature no longer verifies against tenant trust roots that require one (${agent.trust_lapse.reason}); it is not exported`);
      }
      const why = agent.approval?.state === "rejected" ? "was rejected by an operator" : "waits for an operator's approval";
      throw notFound(`agent type ${agentType}'s spec ${why}: it is not exported until approved`);
    }
    return agent;
  }

  /**
   * The provider whose schema a payload is checked against: the one asked for, else the one a
   * lookup would list first, ready providers before those not yet ready (deregistered types
   * provide nothing). Always one agent, so a reply names whose schema it applied.
   */
  private checkedProvider(capability: string, agentType: string | undefined, tenant: Tenant): { agent: AgentState; cap: Capability } {
    if (agentType !== undefined) {
      const agent = this.visibleAgent(agentType, tenant);
      const cap = agent.spec.capabilities.find((c) => c.name === capability);
      if (!cap) throw notFound(`agent type ${agentType} does not provide capability ${capability}`);
      return { agent, cap };
    }
    const matches: Array<{ agent: AgentState; cap: Capability }> = [];
    for (const type of this.view.providersOf(capability)) {
      const agent = this.view.get(type);
      if (!agent || agent.status === AgentStatus.Deregistered || !offeredTo(agent, tenant)) continue;
      const cap = agent.spec.capabilities.find((c) => c.name === capability);
      if (cap) matches.push({ agent, cap });
    }
    const notReady = (m: { agent: AgentState }): number => (m.agent.status === AgentStatus.Ready ? 0 : 1);
    matches.sort((a, b) => notReady(a) - notReady(b) || compareProviders(a, b));
    if (matches.length === 0) throw notFound(`no registered agent provides capability ${capability}`);
    return matches[0]!;
  }

  /** One region's search results for `q`, best first (BM25 over that region's agents). */
  private searchIn(at: RegionReadings, q: SearchQuery, tenant: Tenant): SearchResult[] {
    return at.search.index.query(
      q.query,
      q.limit ?? 10,
      (type) => {
        const agent = at.view.get(type);
        return (
          agent !== undefined &&
          agent.status !== AgentStatus.Deregistered &&
          offeredTo(agent, tenant, q.verified_only) &&
          ofKind(agent, q.kind)
        );
      },
      { readOnly: q.read_only },
    );
  }

  /** This region's view and index, as the regional queries read every region's. */
  private homeReadings(): RegionReadings {
    return { view: this.view, index: this.index, search: this.search };
  }

  /** The providers of `q.capability` in `view` that pass the lookup's filters, unordered. */
  private lookupMatches(view: RegistryView, q: LookupQuery, tenant: Tenant): Match[] {
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

  /** The discover entries of `view` that `tenant` sees, after the agent type `after` when given, ordered by id. */
  private discovered(view: RegistryView, q: DiscoverQuery, tenant: Tenant, after: string | undefined): DiscoveredAgent[] {
    const candidates = q.capability !== undefined ? [...view.providersOf(q.capability)].map((t) => view.get(t)!) : view.all();
    const visible = [...candidates].filter(
      (a) => a !== undefined && (after === undefined || a.agent_type > after) && offeredTo(a, tenant, q.verified_only),
    );
    return discover(visible, q.capability, q.kind);
  }

  /**
   * One page of ordered providers. Providers have no key of their own order, so a lookup's
   * cursor is a position in it: in the filtered order, so the same filters must come with it.
   */
  private lookupReply<M>(q: LookupQuery, ordered: M[], offset: number, serialize: (m: M) => string): SerializedReply {
    const page = takePage(
      ordered.slice(offset).map((m, i) => ({ m, at: offset + i + 1 })),
      ({ at }) => String(at),
      ({ m }) => serialize(m),
      { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: this.listBytes() },
      (text: string) => Buffer.byteLength(text),
    );
    return new SerializedReply(`{"capability":${JSON.stringify(q.capability)},"providers":[${page.items.join(",")}],"next_cursor":${JSON.stringify(cursorOf(page.next_cursor))}`);
  }

  private readonly handlers: Record<QueryOp, (body: Body, tenant: Tenant, data?: Uint8Array) => object | Promise<object>> = {
    lookup: (body, tenant, data) => {
      const q = parseMessage(lookupQuery, body, "lookup");
      checkVersionRange(q);
      const offset = q.cursor ? Number(decodeCursor(q.cursor, OFFSET_RE)) : 0;
      // Regional mode: other regions' views change without this view's listeners; never cached.
      const regional = this.regions();
      if (regional !== null) {
        const all = regionalMatches(q.scope, regional, this.homeReadings(), (view) => this.lookupMatches(view, q, tenant));
        return this.lookupReply(q, all, offset, (m) => JSON.stringify({ ...lookupProvider(m.agent, this.resolution.capability(m.cap)), ...regionFields(m) }));
      }
      const key = JSON.stringify([tenant, q.capability, q.status ?? null, q.version ?? null, q.kind ?? null, q.read_only === true, q.verified_only === true, q.limit ?? null, offset]);
      if (data !== undefined && data.length <= MAX_ALIASED_REQUEST_BYTES && body["min_revision"] === undefined) this.rememberAlias(aliasOf(data, tenant), key);
      const cached = this.lookupCache.get(key);
      if (cached !== undefined) return cached;
      const matches = this.lookupMatches(this.view, q, tenant).sort(compareProviders);
      // Each provider serialized once, where the page measures it, and the reply joined from
      // those: a lookup the cache does not hold serialized every schema twice (docs/performance.md).
      const reply = this.lookupReply(q, matches, offset, (m) => JSON.stringify(lookupProvider(m.agent, this.resolution.capability(m.cap))));
      this.lookupCache.set(key, q.capability, reply);
      return reply;
    },

    get: (body, tenant) => {
      const q = parseMessage(getQuery, body, "get");
      const agent = this.visibleAgent(q.agent_type, tenant);
      const after = q.instances_cursor ? decodeCursor(q.instances_cursor, INSTANCE_ID_RE, "instances_cursor") : undefined;
      const page = { maxBytes: this.listBytes(), ...(q.instances_limit !== undefined ? { limit: q.instances_limit } : {}), ...(after !== undefined ? { after } : {}) };
      return { agent: agentView(agent, page) };
    },

    list: (body, tenant) => {
      const q = parseMessage(listQuery, body, "list");
      const statuses = q.status ? new Set<string>(q.status) : null;
      // Named types: the whole fleet's order (agent types are ASCII, so sort() is it) and cursor.
      const sorted = q.agent_types ? [...new Set(q.agent_types)].sort() : this.index.sortedTypes();
      const start = q.cursor ? indexAfter(sorted, decodeCursor(q.cursor, AGENT_TYPE_RE)) : 0;
      const page = takePage(
        sorted.slice(start),
        (type) => type,
        (type, bytesLeft) => {
          const agent = this.view.get(type);
          if (!agent || !visibleTo(agent, tenant)) return null;
          if (statuses ? !statuses.has(agent.status) : agent.status === AgentStatus.Deregistered) return null;
          if (q.owner_team !== undefined && agent.spec.owner_team !== q.owner_team) return null;
          if (q.capability !== undefined && !agent.spec.capabilities.some((c) => c.name === q.capability)) return null;
          if (!ofKind(agent, q.kind)) return null;
          if (q.tags && !Object.entries(q.tags).every(([k, v]) => agent.spec.tags[k] === v)) return null;
          return agentView(agent, { maxBytes: bytesLeft, ...(q.instances_limit !== undefined ? { limit: q.instances_limit } : {}) });
        },
        { limit: q.limit ?? 100, maxBytes: this.listBytes() },
      );
      return { agents: page.items, next_cursor: cursorOf(page.next_cursor) };
    },

    capabilities: (body, tenant) => {
      const q = parseMessage(capabilitiesQuery, body, "capabilities");
      const statuses = new Set<string>(q.status ?? [AgentStatus.Ready]);
      const names = this.view.sortedCapabilityNames();
      const start = q.cursor ? indexAfter(names, decodeCursor(q.cursor, CAPABILITY_RE)) : 0;
      const withSchemas = q.schemas !== false;
      const page = takePage(
        names.slice(start),
        (name) => name,
        (name) => {
          const matches: Array<{ agent: AgentState; cap: Capability }> = [];
          for (const type of this.view.providersOf(name)) {
            const agent = this.view.get(type);
            if (!agent || !statuses.has(agent.status) || !offeredTo(agent, tenant)) continue;
            const cap = agent.spec.capabilities.find((c) => c.name === name);
            if (cap) matches.push({ agent, cap });
          }
          if (matches.length === 0) return null;
          matches.sort(compareProviders);
          const best = matches[0]!.cap;
          const entry: CapabilityEntry = { name, description: best.description, providers: matches.map((m) => m.agent.agent_type) };
          if (withSchemas) {
            entry.input_schema = this.resolution.schema(best.input_schema);
            entry.output_schema = this.resolution.schema(best.output_schema);
          }
          return entry;
        },
        { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: this.listBytes() },
      );
      return { capabilities: page.items, next_cursor: cursorOf(page.next_cursor) };
    },

    route: (body, tenant) => {
      const q = parseMessage(routeQuery, body, "route");
      const regional = this.regions();
      if (regional === null) return route(this.index, q, tenant);
      // A bad request, or no route in any region, is answered as the home region would answer it.
      const routed = regionalRoute(q.scope, regional, this.homeReadings(), (index) => routeOrNull(index, q, tenant));
      return routed ?? route(this.index, q, tenant);
    },

    find: (body, tenant) => {
      const q = parseMessage(findQuery, body, "find");
      const regional = this.regions();
      if (regional !== null) {
        // An agent type may be in several regions, so a regional page's cursor is a position.
        const offset = q.cursor ? Number(decodeCursor(q.cursor, OFFSET_RE)) : 0;
        const ordered = inScope(q.scope, regional, this.homeReadings(), (at) => find(at.index, q, tenant).map((agent) => ({ agent })), (a, b) => (a.agent.agent_type < b.agent.agent_type ? -1 : a.agent.agent_type > b.agent.agent_type ? 1 : 0));
        const page = takePage(
          ordered.slice(offset).map((m, i) => ({ m, at: offset + i + 1 })),
          ({ at }) => String(at),
          ({ m }, bytesLeft) => ({ ...agentView(m.agent, { maxBytes: bytesLeft - REGION_FIELDS_BYTES }), ...regionFields(m) }),
          { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: this.listBytes() },
        );
        return { agents: page.items, next_cursor: cursorOf(page.next_cursor) };
      }
      const after = q.cursor ? decodeCursor(q.cursor, AGENT_TYPE_RE) : undefined;
      const found = find(this.index, q, tenant);
      const from = after === undefined ? 0 : indexAfter(found.map((a) => a.agent_type), after);
      const page = takePage(found.slice(from), (a) => a.agent_type, (a, bytesLeft) => agentView(a, { maxBytes: bytesLeft }), {
        limit: q.limit ?? Number.POSITIVE_INFINITY,
        maxBytes: this.listBytes(),
      });
      return { agents: page.items, next_cursor: cursorOf(page.next_cursor) };
    },

    search: (body, tenant) => {
      const q = parseMessage(searchQuery, body, "search");
      const regional = this.regions();
      if (regional !== null) {
        const ranked = inScope(q.scope, regional, this.homeReadings(), (at) => this.searchIn(at, q, tenant), (a, b) => b.score - a.score);
        return { results: ranked.slice(0, q.limit ?? 10).map(({ region, stale, ...r }) => ({ ...r, ...regionFields({ region, stale }) })) };
      }
      return { results: this.searchIn(this.homeReadings(), q, tenant) };
    },

    discover: (body, tenant) => {
      const q = parseMessage(discoverQuery, body, "discover");
      const regional = this.regions();
      if (regional !== null) {
        // Agent types repeat across regions, so a regional page's cursor is a position, as lookup's.
        const offset = q.cursor ? Number(decodeCursor(q.cursor, OFFSET_RE)) : 0;
        const ordered = inScope(q.scope, regional, this.homeReadings(), (at) => this.discovered(at.view, q, tenant, undefined), (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const page = takePage(
          ordered.slice(offset).map((d, i) => ({ d, at: offset + i + 1 })),
          ({ at }) => String(at),
          ({ d: { region, stale, ...entry } }) => ({ ...entry, ...regionFields({ region, stale }) }),
          { limit: q.limit ?? Number.POSITIVE_INFINITY, maxBytes: this.listBytes() },
        );
        return { agents: page.items, next_cursor: cursorOf(page.next_cursor) };
      }
      const after = q.cursor ? decodeCursor(q.cursor, AGENT_TYPE_RE) : undefined;
      const page = takePage(this.discovered(this.view, q, tenant, after), (d) => d.id, (d) => d, {
        limit: q.limit ?? Number.POSITIVE_INFINITY,
        maxBytes: this.listBytes(),
      });
      return { agents: page.items, next_cursor: cursorOf(page.next_cursor) };
    },

    // Exports (PROTOCOL.md section 10.3): any agent, whatever it registered with; no liveness.
    card: (body, tenant) => {
      const q = parseMessage(cardQuery, body, "card");
      const card = exportCard(this.approvedAgent(q.agent_type, tenant).spec, q.a2a_version ?? "1.0");
      const signer = this.cardSigner;
      return signer ? signer.sign(card).then((signed) => ({ card: signed })) : { card };
    },

    toolspec: (body, tenant) => {
      const q = parseMessage(toolspecQuery, body, "toolspec");
      return exportToolspec(this.resolution.spec(this.approvedAgent(q.agent_type, tenant).spec));
    },

    // Section 11.4: an answer, not a refusal, for a payload that breaks the schema. The
    // validation runs in a worker thread; one past its budget is refused (payload-checks.ts).
    check: (body, tenant, data) => {
      const q = parseMessage(checkQuery, body, "check");
      const direction = q.direction ?? "input";
      const { agent, cap } = this.checkedProvider(q.capability, q.agent_type, tenant);
      const schema = this.resolution.forCheck(direction === "input" ? cap.input_schema : cap.output_schema);
      const checked = this.payloads.check(schema, { value: q.payload, request: data }, direction);
      return checked.then((errors) => ({ valid: errors.length === 0, errors, agent_type: agent.agent_type, version: agent.spec.version }));
    },

    // Section 11.2: the graph (the whole of it, not cut: a document cannot be paged) written
    // as an SBOM; refused when it outgrows a reply rather than sent cut short.
    sbom: (body, tenant) => {
      const q = parseMessage(sbomQuery, body, "sbom");
      const root = q.agent_type === undefined ? undefined : this.visibleAgent(q.agent_type, tenant);
      if (root === undefined) {
        // Admission before the work: a fleet whose document cannot fit is refused for the price of a sum (fleet-document-floor.ts).
        const floor = fleetDocumentFloor(this.view, tenant, this.listBytes());
        if (floor > this.listBytes()) throw this.sbomTooLarge("its agents' names, versions, descriptions, teams and subjects alone are", false);
      }
      const ctx = { serial: randomUUID(), now: Date.now(), toolVersion: packageVersion() };
      const doc = this.buildSbom(this.view, q.format ?? "cyclonedx", root, tenant, ctx, this.listBytes());
      if (doc === null) throw this.sbomTooLarge("its dependency graph alone is", root !== undefined);
      const bytes = Buffer.byteLength(JSON.stringify(doc));
      if (bytes > this.listBytes()) throw this.sbomTooLarge(`it is ${bytes} bytes,`, root !== undefined);
      return doc;
    },

    // Section 11.2: any agent, whatever its state; each node says its state now.
    graph: (body, tenant) => {
      const q = parseMessage(graphQuery, body, "graph");
      const root = q.agent_type === undefined ? undefined : this.visibleAgent(q.agent_type, tenant);
      const graph = dependencyGraph(this.view, q, root, tenant, this.listBytes());
      return withFileWarnings(graph, this.fileWarnings(), root !== undefined, this.listBytes());
    },
    // Section 11.1: the named schemas are the registry's, whatever the tenant; used_by is the asker's view.
    schemas: (body) => listSchemas(this.view.namedSchemas, parseMessage(schemasQuery, body, "schemas"), this.listBytes()),

    schema: (body, tenant) => getSchema(this.view.namedSchemas, this.view, parseMessage(schemaQuery, body, "schema"), tenant, this.listBytes()),
  };
}

const OFFSET_RE = /^[1-9][0-9]{0,9}$/;
const cursorOf = (key: string | null): string | null => (key === null ? null : encodeCursor(key));
