/**
 * What the registry answers: the ops port listening, the agents' card and tool spec documents,
 * the NATS endpoints.
 */
import { TypeBudgets } from "../domain/rate-limit.js";
import { startEndpoints } from "../adapters/nats/endpoints.js";
import { requestObserver } from "../adapters/http/metrics.js";
import type { EventPublisher } from "../service/events/event-publisher.js";
import type { CardSigner } from "../domain/trust/card-signer.js";
import type { StartContext, Nats, UseCases } from "./context.js";

export async function listenOps(ctx: StartContext): Promise<void> {
  await ctx.ops.listen();
  ctx.teardown.defer("closing the ops server", () => ctx.ops.close());
}


/** The ops server's /agents/<agent_type>/agent-card.json and toolspec.json (the `card` and `toolspec` queries, for shared agents), and the card signing key's /.well-known/jwks.json. */
export function serveAgentDocuments(ctx: StartContext, { queries }: UseCases, cardSigner?: CardSigner): void {
  const strip = ({ revision: _revision, ...rest }: Record<string, unknown>): Record<string, unknown> => rest;
  ctx.ops.serveAgentDocuments({
    card: async (agentType) => (strip((await queries.run("card", { agent_type: agentType }, null)) as Record<string, unknown>)["card"] as object),
    toolspec: async (agentType) => strip((await queries.run("toolspec", { agent_type: agentType }, null)) as Record<string, unknown>),
    jwks: () => cardSigner?.jwks(),
  });
}

/**
 * The API as one NATS micro service. If it stops by itself (a subscription closed under it),
 * the replica stops: an orchestrator restarts a process that exits, not one that looks fine.
 */
export async function openEndpoints(ctx: StartContext, { nc }: Nats, { registrar, schemas, queries, approvals, bucketTrust, deprecations }: UseCases, publisher: EventPublisher): Promise<void> {
  const { config } = ctx;
  const service = await startEndpoints({
    nc,
    prefix: config.prefix,
    version: ctx.version,
    limits: { maxBytes: config.maxPayloadBytes, maxDepth: config.maxDepth },
    typeRateLimit: config.typeRateLimit > 0 ? new TypeBudgets(config.typeRateLimit, Math.max(1, 2 * config.typeRateLimit)) : undefined,
    registrar,
    schemas,
    queries,
    approvals,
    bucketTrust,
    deprecations,
    log: ctx.root.child({ component: "api" }),
    observe: requestObserver(ctx.metrics),
    onHeartbeat: config.heartbeatEvents ? (agentType, instanceId, status, activeTasks) => publisher.heartbeat(agentType, instanceId, status, activeTasks) : undefined,
  });
  let closing = false;
  ctx.teardown.defer("stopping the endpoints", () => {
    closing = true;
    ctx.status.endpointsUp = false;
    return service.stop();
  });
  void service.stopped.then((err) => {
    ctx.status.endpointsUp = false;
    if (!closing) ctx.fatal("the API endpoints stopped", err ?? undefined);
  });
}
