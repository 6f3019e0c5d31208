/**
 * `registry.history` and `registry.tenant.<tenant>.history` as endpoints of the `agent-registry`
 * NATS service (queue group `agent-registry`, PROTOCOL.md section 1), served by the audit
 * mirror only: every mirror answers, the writer and its standbys alike, since they all read the
 * same database. Errors are answered as the registry answers them (section 1 headers and body).
 */
import type { NatsConnection } from "@nats-io/nats-core";
import type { Service } from "@nats-io/services";
import { ErrorCode, invalidRequest } from "../domain/errors.js";
import { startServiceEndpoints } from "../kit/service-endpoints.js";
import { TENANT_RE } from "../protocol/ids.js";
import type { Logger } from "../kit/logger.js";
import { history, type HistorySource } from "./history.js";
import { historyRates } from "./history-rates.js";
import type { AuditMetrics } from "./metrics.js";

/** History bodies are small objects; anything bigger is refused before parsing. */
const BODY_LIMITS = { maxBytes: 16 * 1024, maxDepth: 8 };

export type HistoryEndpointDeps = { nc: NatsConnection; prefix: string; version: string; source: HistorySource; log: Logger; metrics: AuditMetrics };

export async function startHistoryEndpoint(deps: HistoryEndpointDeps): Promise<Service> {
  const { service, add } = await startServiceEndpoints(
    deps.nc,
    deps.prefix,
    {
      version: deps.version,
      description: "Agent registry audit mirror: event history and its rates over time from PostgreSQL (PROTOCOL.md section 12)",
      metadata: { protocol: "1", prefix: deps.prefix, role: "audit" },
    },
    {
      log: deps.log,
      limits: BODY_LIMITS,
      observe: (_endpoint, outcome) => deps.metrics.historyRequests.inc({ outcome }),
      logRefusal: (_endpoint, _subject, error, correlationId) => {
        if (error.code === ErrorCode.Unavailable) deps.log.warn({ err: error.cause, correlation_id: correlationId }, "history refused: the audit database cannot be reached");
      },
    },
  );
  add("history", `${deps.prefix}.history`, (_tokens, body) => history(deps.source, body, null));
  add("history_rates", `${deps.prefix}.history_rates`, (_tokens, body) => historyRates(deps.source, body, null));
  add("tenant_history", `${deps.prefix}.tenant.*.history`, ([, tenant], body) => history(deps.source, body, tenantToken(tenant)));
  add("tenant_history_rates", `${deps.prefix}.tenant.*.history_rates`, ([, tenant], body) => historyRates(deps.source, body, tenantToken(tenant)));
  return service;
}

function tenantToken(tenant: string | undefined): string {
  if (tenant === undefined || !TENANT_RE.test(tenant)) {
    throw invalidRequest(`subject token tenant ${JSON.stringify(tenant ?? "")} must match ${TENANT_RE.source}`, [{ path: "tenant", message: `must match ${TENANT_RE.source}` }]);
  }
  return tenant;
}
