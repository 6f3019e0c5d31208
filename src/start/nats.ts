/**
 * The connection to NATS: the embedded server when asked for, the first connection retried until
 * a server answers, the server's version and auth checked.
 */
import { checkServer, connectionName, hasCredentials, noAuthWarning, registryConnectionOptions, resolveServer } from "../adapters/nats/nats-connection.js";
import { connectUntilUp } from "../kit/connect-until-up.js";
import { monitorConnection } from "../adapters/nats/connection-monitor.js";
import { setBuildInfo } from "../adapters/http/metrics.js";
import { RegionalServerError, regionalServerProblem } from "../adapters/nats/region-streams.js";
import type { StartContext, ConnectionEvents, Nats } from "./context.js";

export async function connectNats(ctx: StartContext): Promise<Nats> {
  const { config, status, teardown, log } = ctx;
  const resolved = await resolveServer(config, log);
  const embedded = resolved.embedded;
  if (embedded) teardown.defer("stopping the embedded nats-server", () => embedded.stop());
  status.natsUrl = resolved.servers;
  const nc = await connectUntilUp(registryConnectionOptions(config, resolved.servers, connectionName(ctx.replicaName, "api")), { signal: ctx.signal, log });
  status.nc = nc;
  teardown.defer("draining NATS", () => (nc.isClosed() ? undefined : nc.drain()));
  const events: ConnectionEvents = { onDown: [], onReconnect: [] };
  monitorConnection(
    nc,
    log,
    {
      onUp: (up) => {
        status.natsUp = up;
        if (!up) for (const f of events.onDown) f();
      },
      onReconnect: () => {
        for (const f of events.onReconnect) f();
      },
      onClosed: (err) => ctx.fatal("nats connection closed", err),
      // Every subscription of this connection is one the registry needs (API, watches, replies).
      onSubscriptionDenied: (subject, err) => ctx.fatal(`the NATS server took away the subscription to ${subject}`, err),
    },
    ctx.metrics,
  );
  const server = checkServer(nc);
  setBuildInfo(ctx.metrics, ctx.version, server.version);
  // Regional mode needs a 2.10+ server of the region's own cluster; refused before anything is created.
  if (config.region !== undefined) {
    const problem = regionalServerProblem(config.region, { version: server.version, cluster: nc.info?.cluster });
    if (problem !== null) throw new RegionalServerError(problem);
  }
  log.info({ server: server.version, clustered: server.clustered }, "connected to NATS");
  for (const w of server.warnings) log.warn(w);
  const noAuth = noAuthWarning(nc.getServer(), hasCredentials(config), nc.info?.auth_required);
  if (noAuth) log.warn({ server: nc.getServer(), auth_required: nc.info?.auth_required ?? false }, noAuth);
  // With per-user permissions in place, the one hole they cannot close is the body's tenant_scope.
  if (hasCredentials(config) && config.plainTenantScope === "allow") {
    log.warn(
      "REGISTRY_PLAIN_TENANT_SCOPE=allow (the default): an agent user may put its agent type in any tenant through the plain register subject; once tenant agents register on registry.tenant.<tenant>.register.<type>, set it to refuse (docs/security.md, Tenants)",
    );
  }
  return { nc, servers: resolved.servers, events };
}
