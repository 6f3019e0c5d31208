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
import { EventVisibility, type OtherRegions, type ViewWait } from "../ui/server/event-visibility.js";
import { fleetSummaries, type FleetState } from "../ui/server/fleet-summary.js";
import { StaticFiles } from "../ui/server/static-files.js";
import { createUiHandler } from "../ui/server/ui-server.js";
import { eventsReadStream, storeNames } from "../config/region.js";
import { regionStoredSubject } from "../adapters/nats/region-streams.js";
import type { RemoteRegions } from "../service/view/remote-regions.js";

/** `fleet`: the replica's view and lease, read-only, for the summary strip (fleet-summary.ts). */
export function serveUi(ctx: StartContext, { nc }: Nats, waitForView: ViewWait, fleet: FleetState, remote: RemoteRegions | null, publicDir?: string): void {
  const { config } = ctx;
  if (!config.ui) return;
  // Regional mode: the page reads every region's events from the region's global stream (config/region.ts).
  const stream = eventsReadStream(config);
  const others = config.region === undefined || remote === null ? undefined : otherRegions(config.region, remote);
  const client = new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs });
  const log = ctx.root.child({ component: "ui" });
  const feed = new EventFeed({
    nc,
    prefix: config.prefix,
    stream,
    maxClients: config.uiMaxClients,
    visibility: new EventVisibility(ctx.view, waitForView, others),
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
    stream,
    // One client per tenant asked for, kept: the page asks for few (a tenant name is checked first).
    clientFor: tenantClients(client, (tenant) => new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs, tenant })),
    // This region's evictor's pause: read from the region's own stream, where its alerts are stored.
    summary: fleetSummaries({ nc, prefix: config.prefix, alerts: { stream: storeNames(config).eventsStream, subject: regionStoredSubject(config.region, `${config.prefix}.alert.self_preservation`) }, missedHeartbeats: config.missedHeartbeats, timeoutMs: Math.min(2000, config.requestTimeoutMs), state: fleet }),
  };
  ctx.ops.serveUi(createUiHandler({ api, feed, files: new StaticFiles(publicDir), token: config.uiToken }));
  // Not a field named `token`: the loggers censor that whatever it holds, so "is one set?" would read "[Redacted]" either way.
  log.info({ path: "/ui/", auth: config.uiToken === undefined ? "off" : "token" }, "serving the web page");
}

/** The other regions' fleets as this replica follows them, for the page's events of those regions. */
function otherRegions(home: string, remote: RemoteRegions): OtherRegions {
  return {
    home,
    fleetOf: (region) => {
      const followed = remote.regions.find((r) => r.name === region);
      return followed && { fleet: followed.view, waitForView: (revision, ms) => remote.waitForRevision(region, revision, ms) };
    },
  };
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
