/**
 * `registry.history` and `registry.tenant.<tenant>.history` as endpoints of the `agent-registry`
 * NATS service (queue group `agent-registry`, PROTOCOL.md section 1), served by the audit
 * mirror only: every mirror answers, the writer and its standbys alike, since they all read the
 * same database. Errors are answered as the registry answers them (section 1 headers and body).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { Svcm, type Service, type ServiceMsg } from "@nats-io/services";
import { ErrorCode, RegistryError, invalidRequest } from "../domain/errors.js";
import { parseRequestBody } from "../adapters/nats/request-body.js";
import { newCorrelationId, respondWithError } from "../adapters/nats/endpoints.js";
import { TENANT_RE } from "../protocol/ids.js";
import { SERVICE_NAME, SERVICE_QUEUE } from "../protocol/subjects.js";
import type { Logger } from "../kit/logger.js";
import { history, type HistorySource } from "./history.js";
import type { AuditMetrics } from "./metrics.js";

/** History bodies are small objects; anything bigger is refused before parsing. */
const BODY_LIMITS = { maxBytes: 16 * 1024, maxDepth: 8 };

export type HistoryEndpointDeps = { nc: NatsConnection; prefix: string; version: string; source: HistorySource; log: Logger; metrics: AuditMetrics };

export async function startHistoryEndpoint(deps: HistoryEndpointDeps): Promise<Service> {
  const { prefix } = deps;
  const depth = prefix.split(".").length;
  const service = await new Svcm(deps.nc).add({
    name: SERVICE_NAME,
    version: deps.version,
    queue: SERVICE_QUEUE,
    description: "Agent registry audit mirror: event history from PostgreSQL (PROTOCOL.md section 12)",
    metadata: { protocol: "1", prefix, role: "audit" },
  });
  const add = (name: string, subject: string, tenantOf: (msg: ServiceMsg) => string | null) => {
    service.addEndpoint(name, {
      subject,
      handler: (err, msg) => {
        if (err) {
          deps.log.error({ err, endpoint: name }, "history endpoint subscription failed");
          return;
        }
        void answer(deps, msg, tenantOf);
      },
    });
  };
  add("history", `${prefix}.history`, () => null);
  add("tenant_history", `${prefix}.tenant.*.history`, (msg) => {
    const tenant = msg.subject.split(".")[depth + 1];
    if (tenant === undefined || !TENANT_RE.test(tenant)) {
      throw invalidRequest(`subject token tenant ${JSON.stringify(tenant ?? "")} must match ${TENANT_RE.source}`, [{ path: "tenant", message: `must match ${TENANT_RE.source}` }]);
    }
    return tenant;
  });
  return service;
}

/** Never throws: @nats-io/services only catches synchronous throws, and a rejection here would crash the process. */
async function answer(deps: HistoryEndpointDeps, msg: ServiceMsg, tenantOf: (msg: ServiceMsg) => string | null): Promise<void> {
  try {
    const body = parseRequestBody(msg.data, BODY_LIMITS);
    const reply = await history(deps.source, body, tenantOf(msg));
    if (msg.reply) msg.respond(JSON.stringify(reply));
    deps.metrics.historyRequests.inc({ outcome: "ok" });
  } catch (e) {
    const error = e instanceof RegistryError ? e : new RegistryError(ErrorCode.Internal, "internal error", { cause: e });
    deps.metrics.historyRequests.inc({ outcome: error.code });
    const correlationId = newCorrelationId();
    if (error.code === ErrorCode.Internal) deps.log.error({ err: e, subject: msg.subject, correlation_id: correlationId }, "history request failed");
    else if (error.code === ErrorCode.Unavailable) deps.log.warn({ err: error.cause, correlation_id: correlationId }, "history refused: the audit database cannot be reached");
    if (!msg.reply) return;
    try {
      respondWithError(msg, error, correlationId);
    } catch (err) {
      deps.log.warn({ err }, "could not send a history error reply");
    }
  }
}
