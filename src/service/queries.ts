/**
 * The query use cases of PROTOCOL.md section 2, answered from this replica's view and its
 * indexes (no store round trip). Every answer carries the revision it reflects; a query with
 * `min_revision` first waits (up to 2 s) for the view to reach it, else `stale_view`.
 */
import semver from "semver";
import { AgentIndex, indexAfter } from "../domain/agent-index.js";
import { agentView, compareProviders, lookupProvider, type AgentView } from "../domain/agent-view.js";
import { discover, find } from "../domain/discovery.js";
import { ErrorCode, RegistryError, invalidRequest, notFound } from "../domain/errors.js";
import {
  capabilitiesQuery,
  discoverQuery,
  findQuery,
  getQuery,
  listQuery,
  lookupQuery,
  routeQuery,
  searchQuery,
} from "../domain/messages.js";
import { AgentStatus, visibleTo, type AgentState } from "../domain/model.js";
import { route } from "../domain/routing.js";
import { SearchIndex } from "../domain/search.js";
import type { AgentSpec, Capability } from "../domain/spec.js";
import { parseMessage } from "../domain/validation.js";
import type { RegistryView } from "../domain/view.js";
import type { QueryOp } from "../adapters/nats/subjects.js";
import { LookupCache } from "./lookup-cache.js";

export const MIN_REVISION_WAIT_MS = 2000;
/**
 * A `list` page ends early once its agents reach this many bytes of JSON (next_cursor goes on):
 * a reply over NATS max_payload (1 MB by default) cannot be sent, and five specs of 240 KiB
 * made every unpaged `list` answer `internal` (docs/reliability.md).
 */
export const MAX_LIST_PAGE_BYTES = 512 * 1024;

/**
 * A reply serialized ahead of time: the UTF-8 of a JSON object closed with the revision (which
 * comes last in every reply). The endpoint sends the bytes as they are, so a cached lookup is
 * neither serialized nor encoded again, and while the revision stands it allocates nothing.
 */
export class SerializedReply {
  /** The reply as last closed: the open object, then `,"revision":N}`. */
  private bytes: Uint8Array;
  private revision = -1;
  private readonly openLength: number;

  /** `open` is the JSON of an object without its closing brace. */
  constructor(open: string) {
    this.openLength = Buffer.byteLength(open);
    this.bytes = Buffer.allocUnsafeSlow(this.openLength);
    (this.bytes as Buffer).write(open, 0);
  }

  /** Bytes held (for the cache's budget; the revision's tail is counted as its longest). */
  get length(): number {
    return this.openLength + REVISION_TAIL_MAX;
  }

  /**
   * The reply with `revision`. The same bytes again while the revision stands: building a
   * 2.6 KB Buffer per lookup made V8 count an external allocation of that size every time, and
   * at 25,000 lookups/s that pressure alone started a major GC several times a second
   * (docs/performance.md). A new revision costs one allocation, kept out of Node's shared
   * pool (allocUnsafeSlow) because the cache holds it for long.
   */
  close(revision: number): Uint8Array {
    if (revision === this.revision) return this.bytes;
    const tail = `,"revision":${revision}}`;
    const out = Buffer.allocUnsafeSlow(this.openLength + tail.length);
    out.set(this.bytes.subarray(0, this.openLength), 0);
    out.write(tail, this.openLength, "latin1");
    this.bytes = out;
    this.revision = revision;
    return out;
  }
}

/** `,"revision":` plus 16 digits and the brace. */
const REVISION_TAIL_MAX = 29;

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
  readonly index = new AgentIndex();
  readonly search = new SearchIndex();
  /**
   * Specs not yet in the search index, by agent type (undefined: gone). Only `search` reads the
   * index, and building it while the view loads cost 0.4 s of a cold start and 31 MB at 10,000
   * agent types (docs/performance.md), so it is brought up to date when a search comes.
   */
  private readonly searchBehind = new Map<string, AgentSpec | undefined>();
  readonly lookupCache = new LookupCache<SerializedReply>();
  /** Request bytes (with the tenant) -> lookup cache key, oldest first; see cachedLookup. */
  private readonly lookupAliases = new Map<string, string>();

  constructor(
    private readonly view: RegistryView,
    private readonly waitForRevision: (revision: number, timeoutMs: number) => Promise<boolean>,
  ) {
    view.addListener(this.index);
    view.addListener({ update: (type, agent) => void this.searchBehind.set(type, agent?.spec) });
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
    if (typeof minRevision === "number" && Number.isInteger(minRevision) && minRevision > this.view.revision) {
      const reached = await this.waitForRevision(minRevision, MIN_REVISION_WAIT_MS);
      if (!reached) {
        throw new RegistryError(ErrorCode.StaleView, `this replica's view is at revision ${this.view.revision}; min_revision ${minRevision} not reached in ${MIN_REVISION_WAIT_MS} ms`);
      }
    }
    const revision = this.view.revision;
    const result = this.handlers[op](body, tenant, data);
    if (result instanceof SerializedReply) return result.close(revision);
    return { ...result, revision };
  }

  private rememberAlias(alias: string, key: string): void {
    if (this.lookupAliases.get(alias) === key) return;
    this.lookupAliases.set(alias, key);
    if (this.lookupAliases.size > MAX_LOOKUP_ALIASES) this.lookupAliases.delete(this.lookupAliases.keys().next().value as string);
  }

  private readonly handlers: Record<QueryOp, (body: Body, tenant: Tenant, data?: Uint8Array) => object> = {
    lookup: (body, tenant, data) => {
      const q = parseMessage(lookupQuery, body, "lookup");
      if (q.version !== undefined && semver.validRange(q.version) === null) {
        throw invalidRequest(`version ${JSON.stringify(q.version)} is not a semver range`, [{ path: "version", message: "not a semver range" }]);
      }
      const key = JSON.stringify([tenant, q.capability, q.status ?? null, q.version ?? null]);
      if (data !== undefined && data.length <= MAX_ALIASED_REQUEST_BYTES && body["min_revision"] === undefined) this.rememberAlias(aliasOf(data, tenant), key);
      const cached = this.lookupCache.get(key);
      if (cached !== undefined) return cached;
      const statuses = new Set<string>(q.status ?? [AgentStatus.Ready]);
      const matches: Array<{ agent: AgentState; cap: Capability }> = [];
      for (const type of this.view.providersOf(q.capability)) {
        const agent = this.view.get(type);
        if (!agent || !visibleTo(agent, tenant) || !statuses.has(agent.status)) continue;
        if (q.version !== undefined && !semver.satisfies(agent.spec.version, q.version, { includePrerelease: true })) continue;
        const cap = agent.spec.capabilities.find((c) => c.name === q.capability);
        if (cap) matches.push({ agent, cap });
      }
      matches.sort(compareProviders);
      const text = JSON.stringify({ capability: q.capability, providers: matches.map((m) => lookupProvider(m.agent, m.cap)) });
      const reply = new SerializedReply(text.slice(0, -1));
      this.lookupCache.set(key, q.capability, reply);
      return reply;
    },

    get: (body, tenant) => {
      const q = parseMessage(getQuery, body, "get");
      const agent = this.view.get(q.agent_type);
      if (!agent || !visibleTo(agent, tenant)) throw notFound(`agent type ${q.agent_type} is not registered`);
      return { agent: agentView(agent) };
    },

    list: (body, tenant) => {
      const q = parseMessage(listQuery, body, "list");
      const statuses = q.status ? new Set<string>(q.status) : null;
      const limit = q.limit ?? 100;
      const sorted = this.index.sortedTypes();
      const start = q.cursor ? indexAfter(sorted, decodeCursor(q.cursor)) : 0;
      const agents: AgentView[] = [];
      let next: string | null = null;
      let bytes = 0;
      for (let i = start; i < sorted.length; i++) {
        const agent = this.view.get(sorted[i]!);
        if (!agent || !visibleTo(agent, tenant)) continue;
        if (statuses ? !statuses.has(agent.status) : agent.status === AgentStatus.Deregistered) continue;
        if (q.owner_team !== undefined && agent.spec.owner_team !== q.owner_team) continue;
        if (q.capability !== undefined && !agent.spec.capabilities.some((c) => c.name === q.capability)) continue;
        if (q.tags && !Object.entries(q.tags).every(([k, v]) => agent.spec.tags[k] === v)) continue;
        const item = agentView(agent);
        const size = JSON.stringify(item).length;
        if (agents.length === limit || (agents.length > 0 && bytes + size > MAX_LIST_PAGE_BYTES)) {
          next = encodeCursor(agents[agents.length - 1]!.agent_type);
          break;
        }
        agents.push(item);
        bytes += size;
      }
      return { agents, next_cursor: next };
    },

    capabilities: (body, tenant) => {
      const q = parseMessage(capabilitiesQuery, body, "capabilities");
      const statuses = new Set<string>(q.status ?? [AgentStatus.Ready]);
      const out: object[] = [];
      for (const name of [...this.view.capabilityNames()].sort()) {
        const matches: Array<{ agent: AgentState; cap: Capability }> = [];
        for (const type of this.view.providersOf(name)) {
          const agent = this.view.get(type);
          if (!agent || !visibleTo(agent, tenant) || !statuses.has(agent.status)) continue;
          const cap = agent.spec.capabilities.find((c) => c.name === name);
          if (cap) matches.push({ agent, cap });
        }
        if (matches.length === 0) continue;
        matches.sort(compareProviders);
        const best = matches[0]!.cap;
        out.push({
          name,
          description: best.description,
          providers: matches.map((m) => m.agent.agent_type),
          input_schema: best.input_schema,
          output_schema: best.output_schema,
        });
      }
      return { capabilities: out };
    },

    route: (body, tenant) => {
      const q = parseMessage(routeQuery, body, "route");
      return route(this.index, q, tenant);
    },

    find: (body, tenant) => {
      const q = parseMessage(findQuery, body, "find");
      return { agents: find(this.index, q, tenant).map(agentView) };
    },

    search: (body, tenant) => {
      const q = parseMessage(searchQuery, body, "search");
      for (const [type, spec] of this.searchBehind) this.search.update(type, spec);
      this.searchBehind.clear();
      const results = this.search.query(q.query, q.limit ?? 10, (type) => {
        const agent = this.view.get(type);
        return agent !== undefined && agent.status !== AgentStatus.Deregistered && visibleTo(agent, tenant);
      });
      return { results };
    },

    discover: (body, tenant) => {
      const q = parseMessage(discoverQuery, body, "discover");
      const candidates = q.capability !== undefined ? [...this.view.providersOf(q.capability)].map((t) => this.view.get(t)!) : this.view.all();
      const visible = [...candidates].filter((a) => a !== undefined && visibleTo(a, tenant));
      return { agents: discover(visible, q.capability) };
    },
  };
}

/** Cursors are opaque to clients: the last agent_type of the page, base64url-encoded. */
const encodeCursor = (agentType: string): string => Buffer.from(agentType, "utf8").toString("base64url");
function decodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[a-z0-9_-]+$/.test(decoded)) throw invalidRequest("cursor is not one this registry issued", [{ path: "cursor", message: "invalid cursor" }]);
  return decoded;
}
