/**
 * Request/reply client of the registry API (PROTOCOL.md section 2). Each method sends the
 * body of the protocol as is and returns the typed reply, or throws a typed error
 * (errors.ts). Subjects are built by the same module the service uses.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { subjects, type QueryOp, type Subjects } from "../protocol/subjects.js";
import { AGENT_TYPE_RE, CAPABILITY_RE, INSTANCE_ID_RE, SCHEMA_NAME_RE, TENANT_RE } from "../protocol/ids.js";
import { callCapability, type CallOptions, type CallResult } from "./call.js";
import { InvalidRequestError, RegistryTimeoutError, decodeReply, requestFailure } from "./errors.js";
import type {
  A2aVersion,
  AgentView,
  ApprovalReply,
  ApproveRequest,
  DeprecateRequest,
  DeprecationReply,
  UndeprecateRequest,
  PendingReply,
  PendingRequest,
  RejectRequest,
  TrustDeleteRequest,
  TrustRootsReply,
  TrustSetRequest,
  CardReply,
  CardRequest,
  CheckReply,
  CheckRequest,
  CapabilitiesReply,
  CapabilitiesRequest,
  DeregisterReply,
  DeregisterRequest,
  DeregisterTypeReply,
  DiscoverReply,
  DiscoverRequest,
  FindReply,
  FindRequest,
  GetReply,
  GetRequest,
  GraphReply,
  GraphRequest,
  SbomReply,
  SbomRequest,
  HeartbeatReply,
  HistoryEvent,
  HistoryReply,
  HistoryRequest,
  HistoryRatesReply,
  HistoryRatesRequest,
  HeartbeatRequest,
  ListReply,
  ListRequest,
  LookupReply,
  LookupRequest,
  QueryOptions,
  RegisterReply,
  RegisterRequest,
  RouteReply,
  RouteRequest,
  SchemaPutReply,
  SchemaPutRequest,
  SchemaReply,
  SchemasReply,
  SchemasRequest,
  SearchReply,
  SearchRequest,
  ToolspecReply,
} from "./types.js";

export type RegistryClientOptions = {
  /** First token of every registry subject. Default `registry`. */
  prefix?: string;
  /**
   * Query a tenant's view (`registry.tenant.<tenant>.<op>`): shared agents plus the tenant's.
   * Writes go to the tenant's subjects too (v1.2): `register` puts the agent in this tenant,
   * and `heartbeat` and `deregister` reach only this tenant's agents.
   */
  tenant?: string;
  /** Request timeout in ms. Default 5000. */
  timeoutMs?: number;
  /**
   * Times a query is sent again after a timeout (default 1). Queries are reads, so this is
   * safe; it covers a request taken by a replica that died before answering. Writes are
   * never retried here.
   */
  queryRetries?: number;
};

export const DEFAULT_TIMEOUT_MS = 5000;

/** `history` is answered by the audit mirror, not the registry: a missing one is named as such. */
const NO_AUDIT_MIRROR = "no audit mirror is answering (start `agent-registry audit`, or `agent-registry serve` with DATABASE_URL)";

// A token that is not valid would build another subject (or a wildcard), so it is refused
// here before anything is sent (as a rejection: the write methods are async).
function token(kind: string, value: string, re: RegExp): string {
  if (typeof value !== "string" || !re.test(value)) throw new InvalidRequestError(`invalid ${kind}: ${JSON.stringify(value)}`);
  return value;
}

export class RegistryClient {
  readonly subjects: Subjects;
  readonly tenant: string | undefined;
  readonly timeoutMs: number;
  readonly queryRetries: number;
  readonly #nc: NatsConnection;
  readonly #enc = new TextEncoder();

  constructor(nc: NatsConnection, options: RegistryClientOptions = {}) {
    this.#nc = nc;
    this.subjects = subjects(options.prefix ?? "registry");
    this.tenant = options.tenant === undefined ? undefined : token("tenant", options.tenant, TENANT_RE);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.queryRetries = options.queryRetries ?? 1;
  }

  /** Sends a JSON body and decodes the reply; the one place that talks to NATS. */
  async request<T>(subject: string, body: object, timeoutMs = this.timeoutMs, nobody?: string): Promise<T> {
    let msg;
    try {
      msg = await this.#nc.request(subject, this.#enc.encode(JSON.stringify(body)), { timeout: timeoutMs });
    } catch (e) {
      throw requestFailure(e, subject, timeoutMs, nobody);
    }
    return decodeReply<T>(msg);
  }

  async #query<T>(op: QueryOp, body: object, opts: QueryOptions = {}): Promise<T> {
    const withRevision = opts.minRevision === undefined ? body : { ...body, min_revision: opts.minRevision };
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request<T>(this.subjects.query(op, this.tenant), withRevision, opts.timeoutMs);
      } catch (e) {
        if (!(e instanceof RegistryTimeoutError) || attempt >= this.queryRetries) throw e;
      }
    }
  }

  // ---- queries ----

  /** Providers of a capability, best first; an empty list when none. */
  lookup(req: LookupRequest | string, opts?: QueryOptions): Promise<LookupReply> {
    return this.#query("lookup", typeof req === "string" ? { capability: req } : req, opts);
  }

  /**
   * One agent type; throws NotFoundError when unknown. A request object can page the
   * instances (`instances_limit`, `instances_cursor`); `getAll` follows them all.
   */
  get(req: GetRequest | string, opts?: QueryOptions): Promise<GetReply> {
    return this.#query("get", typeof req === "string" ? { agent_type: req } : req, opts);
  }

  /** One page of agents, ordered by agent_type. */
  list(req: ListRequest = {}, opts?: QueryOptions): Promise<ListReply> {
    return this.#query("list", req, opts);
  }

  /** Every page of `list`, fetched lazily as the caller iterates. */
  listPages(req: ListRequest = {}, opts?: QueryOptions): AsyncGenerator<ListReply, void, undefined> {
    return this.#pages<ListReply>("list", req, opts);
  }

  /** Every agent of `list`, page after page. */
  async *listAll(req: ListRequest = {}, opts?: QueryOptions): AsyncGenerator<AgentView, void, undefined> {
    for await (const page of this.listPages(req, opts)) yield* page.agents;
  }

  /**
   * One page of the capability projection a coordinator plans with (the whole projection
   * when it fits one reply; `next_cursor` says when it does not).
   */
  capabilities(req: CapabilitiesRequest = {}, opts?: QueryOptions): Promise<CapabilitiesReply> {
    return this.#query("capabilities", req, opts);
  }

  /** The whole capability projection, page after page, as one reply (the last page's revision). */
  capabilitiesAll(req: CapabilitiesRequest = {}, opts?: QueryOptions): Promise<CapabilitiesReply> {
    return this.#collect<CapabilitiesReply, "capabilities">("capabilities", "capabilities", req, opts);
  }

  /** The best ready agent for a skill/tags/runtime; throws NoRouteError when none scores. */
  route(req: RouteRequest, opts?: QueryOptions): Promise<RouteReply> {
    return this.#query("route", req, opts);
  }

  /** Agents by exactly one of skill, tag or name (one page; `findAll` follows the cursor). */
  find(req: FindRequest, opts?: QueryOptions): Promise<FindReply> {
    return this.#query("find", req, opts);
  }

  findAll(req: FindRequest, opts?: QueryOptions): Promise<FindReply> {
    return this.#collect<FindReply, "agents">("find", "agents", req, opts);
  }

  search(req: SearchRequest | string, opts?: QueryOptions): Promise<SearchReply> {
    return this.#query("search", typeof req === "string" ? { query: req } : req, opts);
  }

  /** One page of `discover`; `discoverAll` follows the cursor. */
  discover(req: DiscoverRequest = {}, opts?: QueryOptions): Promise<DiscoverReply> {
    return this.#query("discover", req, opts);
  }

  discoverAll(req: DiscoverRequest = {}, opts?: QueryOptions): Promise<DiscoverReply> {
    return this.#collect<DiscoverReply, "agents">("discover", "agents", req, opts);
  }

  /** Every provider of a capability, best first, following the cursor when they fill more than one reply. */
  lookupAll(req: LookupRequest | string, opts?: QueryOptions): Promise<LookupReply> {
    return this.#collect<LookupReply, "providers">("lookup", "providers", typeof req === "string" ? { capability: req } : req, opts);
  }

  /** One agent type with every instance, following `instances_next_cursor` when they fill more than one reply. */
  async getAll(agentType: string, opts?: QueryOptions): Promise<GetReply> {
    const first = await this.#query<GetReply>("get", { agent_type: agentType }, opts);
    let cursor = first.agent.instances_next_cursor;
    let minRevision = first.revision;
    while (cursor !== null) {
      const next = await this.#query<GetReply>("get", { agent_type: agentType, instances_cursor: cursor }, { ...opts, minRevision });
      first.agent.instances.push(...next.agent.instances);
      cursor = next.agent.instances_next_cursor;
      minRevision = Math.max(minRevision, next.revision);
    }
    first.agent.instances_next_cursor = null;
    return first;
  }

  /**
   * Every page of a paged query. Each page asks for at least the revision of the one before,
   * so a lagging replica never answers a later page from an older view; pages are not one
   * snapshot, though: what changes between two requests shows in the later page.
   */
  async *#pages<R extends { next_cursor: string | null; revision: number }>(op: QueryOp, req: object & { cursor?: string }, opts: QueryOptions = {}): AsyncGenerator<R, void, undefined> {
    let cursor = req.cursor;
    let minRevision = opts.minRevision;
    do {
      const page = await this.#query<R>(op, cursor === undefined ? req : { ...req, cursor }, { ...opts, ...(minRevision !== undefined ? { minRevision } : {}) });
      yield page;
      cursor = page.next_cursor ?? undefined;
      minRevision = Math.max(minRevision ?? 0, page.revision);
    } while (cursor !== undefined);
  }

  /** The pages of a query as one reply: the lists joined, the last page's revision. */
  async #collect<R extends { next_cursor: string | null; revision: number }, K extends keyof R>(op: QueryOp, key: K, req: object, opts?: QueryOptions): Promise<R> {
    let merged: R | undefined;
    for await (const page of this.#pages<R>(op, req, opts)) {
      if (merged === undefined) merged = page;
      else {
        (merged[key] as unknown[]).push(...(page[key] as unknown[]));
        merged.revision = page.revision;
      }
    }
    merged!.next_cursor = null;
    return merged!;
  }

  /** The agent as an A2A Agent Card (v1.0 unless `a2aVersion` says "0.3"), for any agent: PROTOCOL.md section 10.3. */
  async card(agentType: string, opts: QueryOptions & { a2aVersion?: A2aVersion } = {}): Promise<CardReply> {
    const body: CardRequest = { agent_type: token("agent_type", agentType, AGENT_TYPE_RE) };
    if (opts.a2aVersion !== undefined) body.a2a_version = opts.a2aVersion;
    return this.#query("card", body, opts);
  }

  /** The agent's capabilities as MCP tools (the result of `tools/list`), for any agent: PROTOCOL.md section 10.3. */
  async toolspec(agentType: string, opts?: QueryOptions): Promise<ToolspecReply> {
    return this.#query("toolspec", { agent_type: token("agent_type", agentType, AGENT_TYPE_RE) }, opts);
  }

  /**
   * Checks a payload against a capability's input schema (or, with `direction: "output"`, a
   * reply against its output schema): PROTOCOL.md section 11.4. A payload that breaks the
   * schema is an answer (`valid: false` with every problem's path), not an error; the schema
   * is the `agent_type`'s when given, else the provider's a lookup lists first.
   */
  check(req: CheckRequest, opts?: QueryOptions): Promise<CheckReply> {
    return this.#query("check", req, opts);
  }

  /**
   * What an agent type depends on (transitively, `depth` levels, default 16), or with
   * `direction: "dependents"` what depends on it, or with no agent_type the whole fleet's
   * graph: each node with its state now, and the problems found (PROTOCOL.md section 11.2).
   */
  async graph(req: GraphRequest = {}, opts?: QueryOptions): Promise<GraphReply> {
    if (req.agent_type !== undefined) token("agent_type", req.agent_type, AGENT_TYPE_RE);
    return this.#query("graph", req, opts);
  }

  /**
   * The fleet's SBOM, or with `agent_type` that of one agent and everything it depends on: a
   * CycloneDX 1.6 JSON BOM (default) or, with `format: "spdx"`, an SPDX 2.3 JSON document,
   * returned as the document itself (PROTOCOL.md section 11.2).
   */
  async sbom(req: SbomRequest = {}, opts?: QueryOptions): Promise<SbomReply> {
    if (req.agent_type !== undefined) token("agent_type", req.agent_type, AGENT_TYPE_RE);
    return this.#query("sbom", req, opts);
  }

  /**
   * One page of stored events from the audit mirror (PROTOCOL.md section 12), oldest first:
   * answered by `agent-registry audit`, not by the registry, so it needs a mirror running.
   */
  async history(req: HistoryRequest = {}, opts: Pick<QueryOptions, "timeoutMs"> = {}): Promise<HistoryReply> {
    if (req.agent_type !== undefined) token("agent_type", req.agent_type, AGENT_TYPE_RE);
    if (req.capability !== undefined) token("capability", req.capability, CAPABILITY_RE);
    return this.request<HistoryReply>(this.subjects.query("history", this.tenant), req, opts.timeoutMs, NO_AUDIT_MIRROR);
  }

  /**
   * Registrations, deregistrations and evictions per bucket of time (protocol v1.2), counted by
   * the audit mirror's database: `{ since, until?, bucket_seconds }`, at most 1,000 buckets.
   */
  async historyRates(req: HistoryRatesRequest, opts: Pick<QueryOptions, "timeoutMs"> = {}): Promise<HistoryRatesReply> {
    return this.request<HistoryRatesReply>(this.subjects.query("history_rates", this.tenant), req, opts.timeoutMs, NO_AUDIT_MIRROR);
  }

  /** Every matching stored event, page after page, oldest first. */
  async *historyAll(req: HistoryRequest = {}, opts: Pick<QueryOptions, "timeoutMs"> = {}): AsyncGenerator<HistoryEvent, void, undefined> {
    let cursor = req.cursor;
    do {
      const page = await this.history(cursor === undefined ? req : { ...req, cursor }, opts);
      yield* page.events;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * Sends a task to the agent `route` picks for the capability (or `agentType`) and returns its
   * reply, checked both ways by the registry: a payload that breaks the input schema is never
   * sent, a reply that breaks the output schema throws (InvalidPayloadError, with the paths).
   * The payload goes as the request body itself; a NATS services error reply throws AgentReplyError.
   */
  async call(capability: string, payload: unknown, opts: CallOptions = {}): Promise<CallResult> {
    token("capability", capability, CAPABILITY_RE);
    if (opts.agentType !== undefined) token("agent_type", opts.agentType, AGENT_TYPE_RE);
    return callCapability(this, this.#nc, capability, payload, opts);
  }

  // ---- named schemas (PROTOCOL.md section 11.1) ----

  /** One page of the stored schema versions (by name, then version), optionally of one name; `schemasAll` follows the cursors. */
  schemas(req: SchemasRequest = {}, opts?: QueryOptions): Promise<SchemasReply> {
    return this.#query("schemas", req, opts);
  }

  schemasAll(req: SchemasRequest = {}, opts?: QueryOptions): Promise<SchemasReply> {
    return this.#collect<SchemasReply, "schemas">("schemas", "schemas", req, opts);
  }

  /** One stored schema, refs kept, with the agent types that use it; throws NotFoundError when not stored. */
  async schema(name: string, version: string, opts?: QueryOptions): Promise<SchemaReply> {
    return this.#query("schema", { name: token("schema name", name, SCHEMA_NAME_RE), version }, opts);
  }

  /**
   * Stores a version of a named schema, which capability schemas can then use as
   * `{"$ref": "#<name>:<version>"}`. Versions are immutable: the same content again is
   * idempotent (`created: false`), other content throws ConflictError.
   */
  async putSchema(name: string, req: SchemaPutRequest, opts: { timeoutMs?: number } = {}): Promise<SchemaPutReply> {
    return this.request(this.subjects.schemaPut(token("schema name", name, SCHEMA_NAME_RE)), req, opts.timeoutMs);
  }

  // ---- the approval gate (v1.2, docs/trust.md): operators only, whatever this client's tenant ----

  /** Approves the stored spec of an agent type waiting under policy manual (or rejected before): it becomes routable. */
  async approve(agentType: string, req: ApproveRequest, opts: { timeoutMs?: number } = {}): Promise<ApprovalReply> {
    return this.request(this.subjects.approve(token("agent_type", agentType, AGENT_TYPE_RE)), req, opts.timeoutMs);
  }

  /** Rejects the stored spec of an agent type, saying why (an approved one is withdrawn from routing). */
  async reject(agentType: string, req: RejectRequest, opts: { timeoutMs?: number } = {}): Promise<ApprovalReply> {
    return this.request(this.subjects.reject(token("agent_type", agentType, AGENT_TYPE_RE)), req, opts.timeoutMs);
  }

  /**
   * Deprecates an agent type (v1.2, docs/trust.md "Deprecation"), saying why and what to use
   * instead: it stays routable, and every answer that shows it marks it `deprecated`.
   * Deprecating it again with other words replaces them.
   */
  async deprecate(agentType: string, req: DeprecateRequest, opts: { timeoutMs?: number } = {}): Promise<DeprecationReply> {
    return this.request(this.subjects.deprecate(token("agent_type", agentType, AGENT_TYPE_RE)), req, opts.timeoutMs);
  }

  /** Withdraws an agent type's deprecation. */
  async undeprecate(agentType: string, req: UndeprecateRequest, opts: { timeoutMs?: number } = {}): Promise<DeprecationReply> {
    return this.request(this.subjects.undeprecate(token("agent_type", agentType, AGENT_TYPE_RE)), req, opts.timeoutMs);
  }

  /** One page of the specs waiting for a decision (or, with `state: "rejected"`, rejected), all tenants unless `tenant` names one. */
  async pending(req: PendingRequest = {}, opts: QueryOptions = {}): Promise<PendingReply> {
    const body = opts.minRevision !== undefined ? { ...req, min_revision: opts.minRevision } : req;
    return this.request(this.subjects.pending, body, opts.timeoutMs);
  }

  // ---- a tenant's trust roots in the bucket (v1.2, docs/trust.md): operators only ----

  /** Sets (or replaces) a tenant's trust roots in the bucket: inline keys only; `revision` makes it a compare-and-set (0: none stored). */
  async setTrustRoots(tenant: string, req: TrustSetRequest, opts: { timeoutMs?: number } = {}): Promise<TrustRootsReply> {
    return this.request(this.subjects.trustSet(token("tenant", tenant, TENANT_RE)), req, opts.timeoutMs);
  }

  /** A tenant's trust roots as the bucket holds them, and where the roots in force come from (`file` wins). */
  async getTrustRoots(tenant: string, opts: { timeoutMs?: number } = {}): Promise<TrustRootsReply> {
    return this.request(this.subjects.trustGet(token("tenant", tenant, TENANT_RE)), {}, opts.timeoutMs);
  }

  /** Deletes a tenant's trust roots from the bucket (404 when none are stored). */
  async deleteTrustRoots(tenant: string, req: TrustDeleteRequest = {}, opts: { timeoutMs?: number } = {}): Promise<TrustRootsReply> {
    return this.request(this.subjects.trustDelete(token("tenant", tenant, TENANT_RE)), req, opts.timeoutMs);
  }

  // ---- writes ----

  /**
   * Registers one instance with an AgentSpec, an A2A card or an MCP tool spec; the subject
   * names `spec.agent_type` (or `agent_type` beside a card or tool spec), which is the identity,
   * and, for a client with a `tenant`, the tenant: the registry stores the agent with that
   * `tenant_scope` (filled in when the spec names none) and refuses a spec naming another.
   */
  async register(req: RegisterRequest, opts: { timeoutMs?: number } = {}): Promise<RegisterReply> {
    const agentType = token("agent_type", "spec" in req ? req.spec?.agent_type : req.agent_type, AGENT_TYPE_RE);
    if (req.instance_id !== undefined) token("instance_id", req.instance_id, INSTANCE_ID_RE);
    return this.request(this.subjects.register(agentType, this.tenant), req, opts.timeoutMs);
  }

  async heartbeat(agentType: string, instanceId: string, req: HeartbeatRequest = {}, opts: { timeoutMs?: number } = {}): Promise<HeartbeatReply> {
    const subject = this.subjects.heartbeat(token("agent_type", agentType, AGENT_TYPE_RE), token("instance_id", instanceId, INSTANCE_ID_RE), this.tenant);
    return this.request(subject, req, opts.timeoutMs);
  }

  async deregister(agentType: string, instanceId: string, req: DeregisterRequest = {}, opts: { timeoutMs?: number } = {}): Promise<DeregisterReply> {
    const subject = this.subjects.deregisterInstance(
      token("agent_type", agentType, AGENT_TYPE_RE),
      token("instance_id", instanceId, INSTANCE_ID_RE),
      this.tenant,
    );
    return this.request(subject, req, opts.timeoutMs);
  }

  /** Operator action: removes every instance of an agent type (of this client's tenant, when it has one). */
  async deregisterType(agentType: string, req: DeregisterRequest = {}, opts: { timeoutMs?: number } = {}): Promise<DeregisterTypeReply> {
    return this.request(this.subjects.deregisterType(token("agent_type", agentType, AGENT_TYPE_RE), this.tenant), req, opts.timeoutMs);
  }
}
