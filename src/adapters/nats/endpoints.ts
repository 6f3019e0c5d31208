/**
 * The registry's request/reply API as one NATS micro service (`agent-registry`, queue group
 * `agent-registry`), so replicas share the load and `$SRV.PING/INFO/STATS` discovery works.
 * Handlers are async and @nats-io/services only catches synchronous throws, so every handler
 * is wrapped here: a RegistryError becomes the error headers and body of PROTOCOL.md section 1,
 * anything else becomes `internal` with a correlation id that the log repeats.
 */
import { randomUUID } from "node:crypto";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { Svcm, type Service, type ServiceMsg } from "@nats-io/services";
import { ErrorCode, RateLimitedError, RegistryError, ShedError, invalidRequest } from "../../domain/errors.js";
import type { TypeBudgets } from "../../domain/rate-limit.js";
import { parseRequestBody, type BodyLimits } from "./request-body.js";
import { utf8 } from "./utf8.js";
import { REPLY_BACKLOG_LIMIT_BYTES, writeBacklogBytes } from "./write-backlog.js";
import { AGENT_TYPE_RE, SCHEMA_NAME_RE, TENANT_RE } from "../../protocol/ids.js";
import type { HeartbeatReply } from "../../protocol/messages.js";
import type { InstanceStatus } from "../../protocol/states.js";
import { deregisterMessage, registerMessage } from "../../service/messages.js";
import { parseHeartbeatMessage, parseMessage } from "../../service/messages.js";
import type { Registrar } from "../../service/registrar.js";
import type { SchemaRegistrar } from "../../service/schema-registrar.js";
import { schemaPutMessage } from "../../service/messages.js";
import type { QueryService } from "../../service/queries.js";
import type { Logger } from "../../kit/logger.js";
import { QUERY_OPS, SERVICE_NAME, SERVICE_QUEUE, parseWriteSubject, type QueryOp, type WriteSubject } from "../../protocol/subjects.js";

export const CORRELATION_HEADER = "Registry-Correlation-Id";

export type EndpointDeps = {
  nc: NatsConnection;
  prefix: string;
  version: string;
  limits: BodyLimits;
  /** Write requests per second per agent type (REGISTRY_TYPE_RATE_LIMIT); none when off. */
  typeRateLimit?: TypeBudgets;
  registrar: Registrar;
  /** `registry.schema.put.<name>` (PROTOCOL.md section 11.1). */
  schemas: SchemaRegistrar;
  queries: QueryService;
  log: Logger;
  /** Called once per request with its endpoint, outcome (ok or error code) and duration. */
  observe?: (endpoint: string, outcome: string, seconds: number) => void;
  /** Unsent output on the connection past which a heartbeat's reply is dropped (default REPLY_BACKLOG_LIMIT_BYTES; tests set it). */
  replyBacklogLimitBytes?: number;
  /** Called after a heartbeat was stored (heartbeat events). */
  onHeartbeat?: (agentType: string, instanceId: string, status: InstanceStatus, activeTasks: number | undefined) => void;
};

type HandlerResult = object | Uint8Array | Promise<object | Uint8Array>;
/** A reply, or a promise of one; see `handle` for why a handler may answer synchronously. */
type Handler = (tokens: string[], body: Record<string, unknown>, data: Uint8Array) => HandlerResult;
/**
 * Answers from a cache without parsing, or undefined to take the full path. It gets the
 * message rather than the subject's tokens: a plain lookup needs no subject, and decoding and
 * splitting it was 6 % of what a cached lookup allocated.
 */
type FastPath = (msg: ServiceMsg) => Uint8Array | undefined;

export async function startEndpoints(deps: EndpointDeps): Promise<Service> {
  const { prefix } = deps;
  const depth = prefix.split(".").length;
  const service = await new Svcm(deps.nc).add({
    name: SERVICE_NAME,
    version: deps.version,
    queue: SERVICE_QUEUE,
    description: "Agent registry: AgentSpecs, liveness and lookups (PROTOCOL.md v1)",
    metadata: { protocol: "1", prefix },
  });

  const add = (name: string, subject: string, handler: Handler, fast?: FastPath): void => {
    service.addEndpoint(name, {
      subject,
      handler: (err, msg) => {
        if (err) {
          deps.log.error({ err, endpoint: name }, "endpoint subscription failed");
          return;
        }
        if (fast) {
          // Synchronous: a repeated lookup is answered without a promise, a parse or zod.
          const started = performance.now();
          const reply = fast(msg);
          if (reply !== undefined) {
            if (msg.reply) msg.respond(reply);
            deps.observe?.(name, "ok", (performance.now() - started) / 1000);
            return;
          }
        }
        handle(deps, name, msg, msg.subject.split(".").slice(depth), handler);
      },
    });
  };

  // Each write exists twice (v1.2): `<prefix>.<op>...` for shared agents, and
  // `<prefix>.tenant.<tenant>.<op>...` for a tenant's, whose tenant is bound to the write as
  // its agent type is (tenant-binding.ts): NATS permissions on these subjects then confine a
  // tenant's agent users to their tenant.
  const register: Handler = async (tokens, body) => {
    const w = writeSubject(tokens);
    return deps.registrar.register(w.agentType, parseMessage(registerMessage, body, "register"), { tenant: w.tenant });
  };
  const heartbeat: Handler = (tokens, body) => {
    const { agentType, instanceId, tenant } = writeSubject(tokens);
    const msg = parseHeartbeatMessage(body);
    const announce = (reply: HeartbeatReply): HeartbeatReply => {
      deps.onHeartbeat?.(agentType, instanceId!, reply.status, msg.active_tasks);
      return reply;
    };
    const reply = deps.registrar.heartbeat(agentType, instanceId!, msg, tenant ?? undefined);
    return reply instanceof Promise ? reply.then(announce) : announce(reply);
  };
  const deregister: Handler = async (tokens, body) => {
    const { agentType, instanceId, tenant } = writeSubject(tokens);
    const { reason } = parseMessage(deregisterMessage, body, "deregister");
    // The free-text reason is for people: it goes to the log, the event says "graceful".
    deps.log.info({ agent_type: agentType, instance_id: instanceId, tenant, reason }, "deregister requested");
    return deps.registrar.deregisterInstance(agentType, instanceId!, undefined, tenant ?? undefined);
  };
  const deregisterType: Handler = async (tokens, body) => {
    const { agentType, tenant } = writeSubject(tokens);
    const { reason } = parseMessage(deregisterMessage, body, "deregister");
    deps.log.info({ agent_type: agentType, tenant, reason }, "deregister of every instance requested (operator)");
    return deps.registrar.deregisterType(agentType, tenant ?? undefined);
  };
  for (const [root, name] of [[prefix, ""], [`${prefix}.tenant.*`, "tenant_"]] as const) {
    add(`${name}register`, `${root}.register.*`, register);
    add(`${name}heartbeat`, `${root}.heartbeat.*.*`, heartbeat);
    add(`${name}deregister`, `${root}.deregister.*.*`, deregister);
    add(`${name}deregister_type`, `${root}.deregister.*`, deregisterType);
  }
  // `registry.schema.put.<name>`: the subject `registry.schema` (the query op) has one token less, so they never meet.
  add("schema_put", `${prefix}.schema.put.*`, async ([, , name], body) => {
    checkToken("name", name, SCHEMA_NAME_RE);
    return deps.schemas.put(name!, parseMessage(schemaPutMessage, body, "schema put"));
  });
  for (const op of QUERY_OPS) {
    // Only lookups repeat often enough to be worth answering from the request's bytes.
    add(
      op,
      `${prefix}.${op}`,
      async (_tokens, body, data) => deps.queries.run(op as QueryOp, body, null, data),
      op === "lookup" ? (msg) => deps.queries.cachedLookup(msg.data, null) : undefined,
    );
    add(
      `tenant_${op}`,
      `${prefix}.tenant.*.${op}`,
      async ([, tenant], body, data) => {
        checkToken("tenant", tenant, TENANT_RE);
        return deps.queries.run(op as QueryOp, body, tenant!, data);
      },
      op === "lookup"
        ? (msg) => {
            const tenant = msg.subject.split(".")[depth + 1];
            return tenant !== undefined ? deps.queries.cachedLookup(msg.data, tenant) : undefined;
          }
        : undefined,
    );
  }
  return service;
}

/**
 * Runs one request. Synchronous as long as the handler is: a heartbeat answered from memory
 * (issue 20's hot path, tens of thousands a second) is answered in the message's own callback,
 * with no promise allocated for it; a handler returning a promise is answered when it settles.
 * Never throws and never rejects: nothing here may take the process down.
 */
function handle(deps: EndpointDeps, endpoint: string, msg: ServiceMsg, tokens: string[], handler: Handler): void {
  const started = performance.now();
  let result: HandlerResult;
  try {
    checkRateLimit(deps, endpoint, tokens);
    const body = parseRequestBody(msg.data, deps.limits);
    result = handler(tokens, body, msg.data);
  } catch (e) {
    fail(deps, endpoint, msg, e, started);
    return;
  }
  if (result instanceof Promise) {
    result.then(
      (r: object | Uint8Array) => succeed(deps, endpoint, msg, r, started),
      (e: unknown) => fail(deps, endpoint, msg, e, started),
    );
  } else {
    succeed(deps, endpoint, msg, result, started);
  }
}

function succeed(deps: EndpointDeps, endpoint: string, msg: ServiceMsg, result: object | Uint8Array, started: number): void {
  // A heartbeat is taken before its reply is sent; a reply behind this much unsent output
  // would reach its agent after the agent gave up, and would hold up the store's requests and
  // the lease's renewals on the same socket (write-backlog.ts). The agent times out, as it
  // would have anyway, and sends its next heartbeat on time.
  if ((endpoint === "heartbeat" || endpoint === "tenant_heartbeat") && writeBacklogBytes(deps.nc) > (deps.replyBacklogLimitBytes ?? REPLY_BACKLOG_LIMIT_BYTES)) {
    deps.observe?.(endpoint, "reply_dropped", (performance.now() - started) / 1000);
    return;
  }
  try {
    // Bytes are a reply serialized ahead of time (cached lookups): sent as they are.
    if (msg.reply) msg.respond(result instanceof Uint8Array ? result : utf8(JSON.stringify(result)));
  } catch (e) {
    fail(deps, endpoint, msg, e, started);
    return;
  }
  deps.observe?.(endpoint, "ok", (performance.now() - started) / 1000);
}

function fail(deps: EndpointDeps, endpoint: string, msg: ServiceMsg, e: unknown, started: number): void {
  const error = toRegistryError(e);
  const outcome = error instanceof RateLimitedError ? "rate_limited" : error instanceof ShedError ? "shed" : error.code;
  const correlationId = newCorrelationId();
  if (error.code === ErrorCode.Internal) {
    deps.log.error({ err: e, endpoint, subject: msg.subject, correlation_id: correlationId }, "request failed");
  } else {
    deps.log.debug({ endpoint, subject: msg.subject, code: error.code, correlation_id: correlationId, msg: error.message }, "request refused");
  }
  if (msg.reply) {
    try {
      respondWithError(msg, error, correlationId);
    } catch (err) {
      // A closed connection: the requester times out, as it would had the reply been lost.
      deps.log.warn({ err, endpoint, correlation_id: correlationId }, "could not send an error reply");
    }
  }
  deps.observe?.(endpoint, outcome, (performance.now() - started) / 1000);
}

/**
 * An error reply as PROTOCOL.md section 1 gives it: the status headers, the correlation id
 * header, and the error body; an internal error's message names the correlation id the log
 * repeats. Throws when the connection cannot send it.
 */
export function respondWithError(msg: ServiceMsg, error: RegistryError, correlationId: string): void {
  const h = headers();
  h.set(CORRELATION_HEADER, correlationId);
  const message = error.code === ErrorCode.Internal ? `${error.message} (correlation id ${correlationId})` : error.message;
  const body = JSON.stringify({ error: { ...error.toBody().error, message } });
  msg.respondError(error.status, oneLine(message), body, { headers: h });
}

/**
 * Twelve random hex digits, as the log repeats them. Taken from randomUUID, which draws its
 * randomness in batches: randomBytes(6) per refusal was 4.3 % of the registry's CPU when an
 * overloaded store refused heartbeats by the tens of thousands a second (issue 20's profile).
 * The UUID's first eight and the four after its first dash are random (the version is later).
 */
export function newCorrelationId(): string {
  const u = randomUUID();
  return u.slice(0, 8) + u.slice(9, 13);
}

const WRITE_ENDPOINTS = new Set(["register", "heartbeat", "deregister", "deregister_type"].flatMap((e) => [e, `tenant_${e}`]));

/** Before anything reads the body: refusing a flood must cost next to nothing. */
function checkRateLimit(deps: EndpointDeps, endpoint: string, tokens: string[]): void {
  // `<op>.<type>...` or `tenant.<tenant>.<op>.<type>...`
  const agentType = tokens[0] === "tenant" ? tokens[3] : tokens[1];
  if (!deps.typeRateLimit || !WRITE_ENDPOINTS.has(endpoint) || agentType === undefined || !AGENT_TYPE_RE.test(agentType)) return;
  const wait = deps.typeRateLimit.take(agentType, 1, Date.now());
  if (wait > 0) {
    throw new RateLimitedError(`agent type ${agentType} is over its rate limit of ${deps.typeRateLimit.ratePerSecond} write requests per second; retry in ${wait} ms`);
  }
}

/** The write a subject names; a token that breaks its rule is refused as any bad token is. */
function writeSubject(tokens: string[]): WriteSubject {
  const parsed = parseWriteSubject(tokens);
  // The endpoints' subscriptions only deliver write subjects.
  if (parsed === null) throw invalidRequest(`not a write subject: ${tokens.join(".")}`);
  if ("token" in parsed) throw badToken(parsed.token, parsed.value, parsed.rule);
  return parsed;
}

function checkToken(name: string, value: string | undefined, re: RegExp): void {
  if (value === undefined || !re.test(value)) throw badToken(name, value, re);
}

const badToken = (name: string, value: string | undefined, re: RegExp): RegistryError =>
  invalidRequest(`subject token ${name} ${JSON.stringify(value ?? "")} must match ${re.source}`, [{ path: name, message: `must match ${re.source}` }]);

function toRegistryError(e: unknown): RegistryError {
  if (e instanceof RegistryError) return e;
  return new RegistryError(ErrorCode.Internal, "internal error", { cause: e });
}

/** Header values cannot hold line breaks. */
const oneLine = (s: string): string => s.replace(/[\r\n]+/g, " ").slice(0, 1024);
