/**
 * The query use cases of PROTOCOL.md section 2, answered from this replica's view and its
 * indexes (no store round trip). What each op accepts and answers is its entry in the query
 * table (query-table.ts); this service parses the body once with it, waits when asked to, and
 * closes the answer with the revision it reflects. A query with `min_revision` is checked
 * first, then waits (up to 2 s, among a bounded number of waiters) for the view to reach it,
 * else `stale_view`.
 */
import { DEFAULT_MAX_PAYLOAD } from "../../kit/nats-limits.js";
import { AgentIndex } from "../../domain/query/agent-index.js";
import { SchemaResolution } from "./schema-resolution.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { QueryOp } from "../../protocol/subjects.js";
import { LookupCache } from "./lookup-cache.js";
import { SerializedReply } from "./serialized-reply.js";
import type { RegionalViews } from "./regional-queries.js";
import type { CardSigner } from "../../domain/trust/card-signer.js";
import { InlinePayloadChecks, type PayloadChecks } from "./payload-checks.js";
import { reachRevision, type RevisionWait } from "../view/revision-waiters.js";
import { SearchIndexer } from "../view/search-indexer.js";
import type { FileProblem } from "../../domain/spec/registry-v2/problems.js";
import { sbomDocument } from "../../domain/sbom/sbom-document.js";
import type { Logger } from "../../kit/logger.js";
import { QUERIES, parseQuery, type QueryTable } from "./query-table.js";
import type { QueryContext, Tenant } from "./query-entry.js";

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

export type QueryServiceOptions = {
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
};

export class QueryService {
  readonly index: AgentIndex;
  /** The search index, built from the first search on, in slices that never hold the event loop long. */
  readonly search: SearchIndexer;
  readonly lookupCache = new LookupCache<SerializedReply>();
  /** Capability schemas with their named refs inlined, as lookup, capabilities, toolspec and check use them. */
  readonly resolution: SchemaResolution;
  /** Request bytes (with the tenant) -> lookup cache key, oldest first; see cachedLookup. */
  private readonly lookupAliases = new Map<string, string>();

  /**
   * The connection's real max_payload (the server says it on connect, and a reconnect may land
   * on a server that says otherwise): every list a reply carries is paged to fit it.
   */
  private readonly maxPayload: () => number;
  /** What the query table's answers read (query-entry.ts). */
  private readonly context: QueryContext;

  constructor(
    private readonly view: RegistryView,
    private readonly waitForRevision: (revision: number, timeoutMs: number) => Promise<RevisionWait>,
    opts: QueryServiceOptions = {},
  ) {
    this.maxPayload = opts.maxPayload ?? (() => DEFAULT_MAX_PAYLOAD);
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
    this.context = this.contextOf(opts);
  }

  private contextOf(opts: QueryServiceOptions): QueryContext {
    const regions = opts.regions ?? (() => null);
    const fileWarnings = opts.fileWarnings ?? (() => []);
    return {
      view: this.view,
      index: this.index,
      home: { view: this.view, index: this.index, search: this.search },
      resolution: this.resolution,
      lookupCache: this.lookupCache,
      payloads: opts.payloads ?? new InlinePayloadChecks(),
      cardSigner: opts.cardSigner,
      buildSbom: opts.buildSbom ?? sbomDocument,
      fileWarnings: () => fileWarnings(),
      regions: () => regions(),
      listBytes: () => this.listBytes(),
      rememberLookup: (data, tenant, key) => {
        if (data !== undefined && data.length <= MAX_ALIASED_REQUEST_BYTES) this.rememberAlias(aliasOf(data, tenant), key);
      },
    };
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

  /** Runs one query op as its entry in the query table says. */
  async run(op: QueryOp, body: Body, tenant: Tenant, data?: Uint8Array): Promise<object | Uint8Array> {
    const entry: QueryTable[QueryOp] = QUERIES[op];
    // The body is parsed once, before any wait: a bad one is refused at once, never after a wait (issue 14).
    const q = parseQuery(op, body);
    if (q.min_revision !== undefined && q.min_revision > this.view.revision) await reachRevision(this.waitForRevision, () => this.view.revision, q.min_revision);
    if (entry.ready) await entry.ready(this.context);
    const revision = this.view.revision;
    const answer = entry.answer(q, tenant, this.context, data);
    // Only `check` and a signed `card` answer later; the reply says the revision its answer was chosen at.
    const result = answer instanceof Promise ? await answer : answer;
    if (result instanceof SerializedReply) return result.close(revision);
    if (entry.document === true) return result;
    return { ...result, revision };
  }

  private rememberAlias(alias: string, key: string): void {
    if (this.lookupAliases.get(alias) === key) return;
    this.lookupAliases.set(alias, key);
    if (this.lookupAliases.size > MAX_LOOKUP_ALIASES) this.lookupAliases.delete(this.lookupAliases.keys().next().value as string);
  }

  /** Bytes the list of one reply may take (the approval gate's pending list pages by it too). */
  listBytes(): number {
    const max = this.maxPayload();
    return max - Math.min(REPLY_OVERHEAD_BYTES, Math.floor(max / 4));
  }
}
