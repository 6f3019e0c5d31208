/**
 * The registry's request/reply API as one NATS micro service (`agent-registry`, queue group
 * `agent-registry`), so replicas share the load and `$SRV.PING/INFO/STATS` discovery works.
 * The scaffold (kit/service-endpoints.ts) parses bodies and answers errors; this file maps
 * each subject to its use case, and adds the registry's own rules: the per-type rate limit
 * before any body is read, and no heartbeat reply behind a write backlog.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { Service } from "@nats-io/services";
import type { RegistryError} from "../../domain/errors.js";
import { RateLimitedError, invalidRequest } from "../../domain/errors.js";
import type { TypeBudgets } from "../../domain/rate-limit.js";
import type { BodyLimits } from "../../kit/request-body.js";
import { startServiceEndpoints, type EndpointHandler as Handler, type ServiceEndpoints } from "../../kit/service-endpoints.js";
import { REPLY_BACKLOG_LIMIT_BYTES, writeBacklogBytes } from "./write-backlog.js";
import { AGENT_TYPE_RE, SCHEMA_NAME_RE, TENANT_RE } from "../../protocol/ids.js";
import type { HeartbeatReply } from "../../protocol/messages.js";
import type { InstanceStatus } from "../../protocol/states.js";
import { deregisterMessage, registerMessage } from "../../domain/messages.js";
import { parseHeartbeatMessage, parseMessage } from "../../domain/messages.js";
import type { Registrar } from "../../service/registration/registrar.js";
import type { SchemaRegistrar } from "../../service/registration/schema-registrar.js";
import { approveMessage, deprecateMessage, pendingQuery, rejectMessage, schemaPutMessage, undeprecateMessage } from "../../domain/messages.js";
import type { Approvals } from "../../service/registration/approvals.js";
import type { BucketTrustOps } from "../../service/registration/bucket-trust-ops.js";
import { trustDeleteMessage, trustGetMessage, trustSetMessage } from "../../domain/messages.js";
import type { Deprecations } from "../../service/registration/deprecations.js";
import type { QueryService } from "../../service/queries/queries.js";
import type { Logger } from "../../kit/logger.js";
import { QUERY_OPS, parseWriteSubject, type QueryOp, type WriteSubject } from "../../protocol/subjects.js";

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
  /** v1.2: `registry.approval.*`, the approval gate's operator ops (docs/trust.md). */
  approvals?: Approvals;
  /** v1.2: `registry.trust.{set,get,delete}.<tenant>`, the tenants' trust roots in the bucket (docs/trust.md). */
  bucketTrust?: BucketTrustOps;
  /** v1.2: `registry.approval.deprecate.*` and `.undeprecate.*` (docs/trust.md, "Deprecation"). */
  deprecations?: Deprecations;
  log: Logger;
  /** Called once per request with its endpoint, outcome (ok or error code) and duration. */
  observe?: (endpoint: string, outcome: string, seconds: number) => void;
  /** Unsent output on the connection past which a heartbeat's reply is dropped (default REPLY_BACKLOG_LIMIT_BYTES; tests set it). */
  replyBacklogLimitBytes?: number;
  /** Called after a heartbeat was stored (heartbeat events). */
  onHeartbeat?: (agentType: string, instanceId: string, status: InstanceStatus, activeTasks: number | undefined) => void;
};

export async function startEndpoints(deps: EndpointDeps): Promise<Service> {
  const { prefix } = deps;
  const depth = prefix.split(".").length;
  const { service, add } = await startServiceEndpoints(
    deps.nc,
    prefix,
    { version: deps.version, description: "Agent registry: AgentSpecs, liveness and lookups (PROTOCOL.md v1)", metadata: { protocol: "1", prefix } },
    {
      log: deps.log,
      limits: deps.limits,
      admit: (endpoint, tokens) => checkRateLimit(deps, endpoint, tokens),
      // A heartbeat is taken before its reply is sent; a reply behind this much unsent output
      // would reach its agent after the agent gave up, and would hold up the store's requests and
      // the lease's renewals on the same socket (write-backlog.ts). The agent times out, as it
      // would have anyway, and sends its next heartbeat on time.
      keepReply: (endpoint) =>
        !((endpoint === "heartbeat" || endpoint === "tenant_heartbeat") && writeBacklogBytes(deps.nc) > (deps.replyBacklogLimitBytes ?? REPLY_BACKLOG_LIMIT_BYTES)),
      ...(deps.observe ? { observe: deps.observe } : {}),
    },
  );

  addWriteEndpoints(deps, add);
  addOperatorEndpoints(deps, add);
  addQueryEndpoints(deps, add, depth);
  return service;
}

/** Registers an endpoint (kit/service-endpoints.ts). */
type Add = ServiceEndpoints["add"];

/** register, heartbeat and deregister, for shared agents and for each tenant's. */
function addWriteEndpoints(deps: EndpointDeps, add: Add): void {
  const { prefix } = deps;
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
}

/** Named schemas, and (v1.2) the approval gate's operator ops. */
function addOperatorEndpoints(deps: EndpointDeps, add: Add): void {
  const { prefix } = deps;
  // `registry.schema.put.<name>`: the subject `registry.schema` (the query op) has one token less, so they never meet.
  add("schema_put", `${prefix}.schema.put.*`, async ([, , name], body) => {
    checkToken("name", name, SCHEMA_NAME_RE);
    return deps.schemas.put(name!, parseMessage(schemaPutMessage, body, "schema put"));
  });
  const approvals = deps.approvals;
  if (approvals) {
    // v1.2 (docs/trust.md, "The approval gate"): operators only, by NATS permissions (deploy/nats/auth.conf).
    add("approval_approve", `${prefix}.approval.approve.*`, async ([, , agentType], body) => {
      checkToken("agent_type", agentType, AGENT_TYPE_RE);
      const msg = parseMessage(approveMessage, body, "approve");
      deps.log.info({ agent_type: agentType, by: msg.by, version: msg.version }, "approval requested (operator)");
      return approvals.decide(agentType!, { state: "approved", ...msg });
    });
    add("approval_reject", `${prefix}.approval.reject.*`, async ([, , agentType], body) => {
      checkToken("agent_type", agentType, AGENT_TYPE_RE);
      const msg = parseMessage(rejectMessage, body, "reject");
      deps.log.info({ agent_type: agentType, by: msg.by, version: msg.version, reason: msg.reason }, "rejection requested (operator)");
      return approvals.decide(agentType!, { state: "rejected", ...msg });
    });
    add("approval_pending", `${prefix}.approval.pending`, async (_tokens, body) => approvals.pending(parseMessage(pendingQuery, body, "pending")));
  }
  addDeprecationEndpoints(deps, add);
  if (deps.bucketTrust) addTrustEndpoints(deps, deps.bucketTrust, add);
}

/** v1.2 (docs/trust.md, "Trust roots in the bucket"): operators only, by NATS permissions (deploy/nats/auth.conf). */
function addTrustEndpoints(deps: EndpointDeps, ops: BucketTrustOps, add: Add): void {
  const { prefix } = deps;
  add("trust_set", `${prefix}.trust.set.*`, async ([, , tenant], body) => {
    checkToken("tenant", tenant, TENANT_RE);
    const msg = parseMessage(trustSetMessage, body, "trust set");
    deps.log.info({ tenant, by: msg.by, revision: msg.revision, mode: msg.trust.mode }, "trust roots set requested (operator)");
    return ops.set(tenant!, msg);
  });
  add("trust_get", `${prefix}.trust.get.*`, async ([, , tenant], body) => {
    checkToken("tenant", tenant, TENANT_RE);
    parseMessage(trustGetMessage, body, "trust get");
    return ops.get(tenant!);
  });
  add("trust_delete", `${prefix}.trust.delete.*`, async ([, , tenant], body) => {
    checkToken("tenant", tenant, TENANT_RE);
    const msg = parseMessage(trustDeleteMessage, body, "trust delete");
    deps.log.info({ tenant, by: msg.by, revision: msg.revision }, "trust roots delete requested (operator)");
    return ops.delete(tenant!, msg);
  });
}

/** v1.2 (docs/trust.md, "Deprecation"): operators only, by NATS permissions (deploy/nats/auth.conf), as the approval gate's ops. */
function addDeprecationEndpoints(deps: EndpointDeps, add: Add): void {
  const { prefix, deprecations } = deps;
  if (!deprecations) return;
  add("approval_deprecate", `${prefix}.approval.deprecate.*`, async ([, , agentType], body) => {
    checkToken("agent_type", agentType, AGENT_TYPE_RE);
    const msg = parseMessage(deprecateMessage, body, "deprecate");
    deps.log.info({ agent_type: agentType, by: msg.by, version: msg.version, reason: msg.reason, successor: msg.successor }, "deprecation requested (operator)");
    return deprecations.decide(agentType!, { deprecated: true, ...msg });
  });
  add("approval_undeprecate", `${prefix}.approval.undeprecate.*`, async ([, , agentType], body) => {
    checkToken("agent_type", agentType, AGENT_TYPE_RE);
    const msg = parseMessage(undeprecateMessage, body, "undeprecate");
    deps.log.info({ agent_type: agentType, by: msg.by, version: msg.version, reason: msg.reason }, "undeprecation requested (operator)");
    return deprecations.decide(agentType!, { deprecated: false, ...msg });
  });
}

/** Every query op, shared and per tenant; lookups may be answered from their bytes (the lookup cache). */
function addQueryEndpoints(deps: EndpointDeps, add: Add, depth: number): void {
  const { prefix } = deps;
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
