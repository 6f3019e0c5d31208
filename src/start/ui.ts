/**
 * The start step of the operator's web page (docs/ui.md): with REGISTRY_UI on (the default),
 * the ops server answers /ui through the SDK client on this replica's connection, like any
 * other client of the registry. The event streams close before NATS drains. Its event stream
 * reads this replica's view (`waitForView` lets it catch up) to leave out what the page's
 * queries would not show (event-visibility.ts).
 */
import type { Nats, StartContext } from "./steps.js";
import { RegistryClient } from "../client/registry-client.js";
import { EventFeed } from "../ui/server/event-feed.js";
import { EventVisibility, type ViewWait } from "../ui/server/event-visibility.js";
import { fleetSummaries, type FleetState } from "../ui/server/fleet-summary.js";
import { StaticFiles } from "../ui/server/static-files.js";
import { createUiHandler } from "../ui/server/ui-server.js";
import { storeNames } from "../config/region.js";

/** `fleet`: the replica's view and lease, read-only, for the summary strip (fleet-summary.ts). */
export function serveUi(ctx: StartContext, { nc }: Nats, waitForView: ViewWait, fleet: FleetState, publicDir?: string): void {
  const { config } = ctx;
  if (!config.ui) return;
  const client = new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs });
  const log = ctx.root.child({ component: "ui" });
  const feed = new EventFeed({
    nc,
    prefix: config.prefix,
    stream: storeNames(config).eventsStream,
    maxClients: config.uiMaxClients,
    visibility: new EventVisibility(ctx.view, waitForView),
    timeoutMs: config.requestTimeoutMs,
    connected: () => ctx.status.natsUp,
    log,
  });
  ctx.teardown.defer("closing the web page's event streams", () => feed.closeAll());
  const api = {
    client,
    nc,
    prefix: config.prefix,
    version: ctx.version,
    missedHeartbeats: config.missedHeartbeats,
    heartbeatEvents: config.heartbeatEvents,
    historyTimeoutMs: Math.min(2000, config.requestTimeoutMs),
    stream: storeNames(config).eventsStream,
    // One client per tenant asked for, kept: the page asks for few (a tenant name is checked first).
    clientFor: tenantClients(client, (tenant) => new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs, tenant })),
    summary: fleetSummaries({ nc, prefix: config.prefix, stream: storeNames(config).eventsStream, missedHeartbeats: config.missedHeartbeats, timeoutMs: Math.min(2000, config.requestTimeoutMs), state: fleet }),
  };
  ctx.ops.serveUi(createUiHandler({ api, feed, files: new StaticFiles(publicDir), token: config.uiToken }));
  // Not a field named `token`: the loggers censor that whatever it holds, so "is one set?" would read "[Redacted]" either way.
  log.info({ path: "/ui/", auth: config.uiToken === undefined ? "off" : "token" }, "serving the web page");
}

/** At most MAX_TENANT_CLIENTS tenants' clients are kept; past that, one is built per request. */
const MAX_TENANT_CLIENTS = 64;
function tenantClients(shared: RegistryClient, build: (tenant: string) => RegistryClient): (tenant: string | undefined) => RegistryClient {
  const kept = new Map<string, RegistryClient>();
  return (tenant) => {
    if (tenant === undefined) return shared;
    const known = kept.get(tenant);
    if (known) return known;
    const client = build(tenant);
    if (kept.size < MAX_TENANT_CLIENTS) kept.set(tenant, client);
    return client;
  };
}
