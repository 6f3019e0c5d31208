/**
 * The discovery front's HTTP server (docs/discovery.md): ARD's registry API and the
 * ai-catalog.json manifest (ard-routes.ts), and the MCP Registry's generic API under /v0.1
 * (mcp-registry-routes.ts). Here: the token, the tenant path, the bound on requests in flight,
 * errors in the shape of the API asked, and listening. Read-only (the POSTs,
 * /search and /explore, read), every body bounded before it is parsed, every reply paged, and every path also
 * under `/tenants/<tenant>/` for that tenant's view. Built apart from listen, as the ops server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RegistryClient } from "../client/registry-client.js";
import type { NatsConnection } from "@nats-io/nats-core";
import type { DiscoveryConfig } from "../config/discovery.js";
import { listenBounded } from "../kit/http-listen.js";
import { redactUrl } from "../kit/log-redaction.js";
import type { Logger } from "../kit/logger.js";
import { TENANT_RE } from "../protocol/ids.js";
import { ArdError, ArdErrorCode, invalidArgument } from "./ard-error.js";
import { routeArd } from "./ard-routes.js";
import { bearerRefusal } from "./bearer.js";
import type { Scope } from "./discovery-api.js";
import { sendJson } from "./http-reply.js";
import { isMcpRegistryPath, mcpRegistryError, routeMcpRegistry } from "./mcp-registry-routes.js";
import { mapRegistryFailure } from "./registry-failure.js";

export type DiscoveryServerOptions = {
  config: Pick<
    DiscoveryConfig,
    "httpHost" | "httpPort" | "publicUrl" | "publisher" | "displayName" | "token" | "maxBodyBytes" | "maxManifestEntries" | "referrals" | "maxInFlight" | "federationTimeoutMs" | "federationMaxBytes"
  >;
  nc: NatsConnection;
  /** The registry's subject prefix and request timeout, as the CLI's common options give them. */
  client: { prefix?: string; timeoutMs?: number };
  /** The tenant whose view the paths outside /tenants/ answer; unset: the shared agents. */
  defaultTenant?: string | undefined;
  log: Logger;
};

export type DiscoveryServer = {
  listen(): Promise<number>;
  close(): Promise<void>;
  /** The base URL links are built on (the public URL, else the bound address). */
  readonly url: string;
};

const TENANT_PATH_RE = /^\/tenants\/([^/]+)(\/.*)$/;

function sendError(res: ServerResponse, e: ArdError, headers: Record<string, string> = {}): void {
  sendJson(res, e.status, { errorCode: e.errorCode, message: e.message }, headers);
}

/** An error in the shape of the API the path belongs to: the MCP Registry's `{error}` under /v0.1, else ARD's. */
function sendFailure(req: IncomingMessage, res: ServerResponse, e: ArdError, headers: Record<string, string> = {}): void {
  let mcp = false;
  try {
    mcp = isMcpRegistryPath(new URL(req.url ?? "/", "http://discovery.invalid").pathname);
  } catch {
    // A URL that does not parse is answered in ARD's shape.
  }
  if (mcp) sendJson(res, e.status, mcpRegistryError(e), headers);
  else sendError(res, e, headers);
}

export function createDiscoveryServer(options: DiscoveryServerOptions): DiscoveryServer {
  const { config, nc, log } = options;
  let server: Server | undefined;
  let baseUrl = config.publicUrl?.replace(/\/+$/, "") ?? `http://${config.httpHost}:${config.httpPort}`;
  const shared = config.token === undefined;

  function scopeOf(tenant: string | null): Scope {
    const client = new RegistryClient(nc, { ...options.client, ...(tenant === null ? {} : { tenant }) });
    return {
      client,
      tenant,
      links: { publisher: config.publisher, baseUrl: tenant === null ? baseUrl : `${baseUrl}/tenants/${tenant}` },
      referrals: config.referrals ?? [],
      federation: { timeoutMs: config.federationTimeoutMs, maxBytes: config.federationMaxBytes, onFailure: reportUpstreamFailures },
    };
  }

  /** Upstreams left out of an `auto` search: logged, one line each, so an operator sees which and why. */
  function reportUpstreamFailures(failures: ReadonlyArray<{ identifier: string; reason: string }>): void {
    for (const f of failures) log.warn({ upstream: f.identifier, reason: f.reason }, `upstream registry ${f.identifier} left out of a federated search: ${f.reason}`);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://discovery.invalid");
    const refusal = bearerRefusal(req.headers.authorization, config.token);
    if (refusal) return sendFailure(req, res, new ArdError(401, ArdErrorCode.Unauthenticated, refusal.message), { "WWW-Authenticate": refusal.challenge });
    let path = url.pathname;
    let tenant: string | null = options.defaultTenant ?? null;
    const tenantPath = TENANT_PATH_RE.exec(path);
    if (tenantPath) {
      if (!TENANT_RE.test(tenantPath[1]!)) throw invalidArgument(`tenant ${JSON.stringify(tenantPath[1]!.slice(0, 100))} is not a tenant name`);
      tenant = tenantPath[1]!;
      path = tenantPath[2]!;
    }
    if (isMcpRegistryPath(path)) return routeMcpRegistry(req, res, path, url.searchParams, scopeOf(tenant), shared);
    return routeArd(req, res, path, url.searchParams, scopeOf(tenant), { config, shared });
  }

  let inFlight = 0;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    // Each request may fan out to many registry queries: past the bound, refuse rather than queue.
    if (inFlight >= config.maxInFlight) {
      sendFailure(req, res, new ArdError(429, ArdErrorCode.RateLimitExceeded, `${config.maxInFlight} requests are being answered; try again`), { "Retry-After": "1", Connection: "close" });
      return;
    }
    inFlight++;
    res.once("close", () => inFlight--);
    route(req, res).catch((err: unknown) => {
      const failure = err instanceof ArdError ? err : mapRegistryFailure(err);
      if (failure.status >= 500) log.error({ err, path: redactUrl(req.url ?? "/") }, "discovery request failed");
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // A body refused half-read leaves the rest on the socket: close it rather than parse it as the next request.
      sendFailure(req, res, failure, failure.status === 413 ? { Connection: "close" } : {});
    });
  }

  return {
    get url() {
      return baseUrl;
    },
    async listen() {
      if (server) return server.address() ? (server.address() as AddressInfo).port : 0;
      const s = createServer(handle);
      server = s;
      try {
        const port = await listenBounded(s, config.httpHost, config.httpPort, (err) => log.error({ err }, "discovery server error"));
        if (config.publicUrl === undefined) baseUrl = `http://${config.httpHost.includes(":") ? `[${config.httpHost}]` : config.httpHost}:${port}`;
        return port;
      } catch (err) {
        server = undefined;
        throw err;
      }
    },
    close() {
      const s = server;
      server = undefined;
      if (!s) return Promise.resolve();
      return new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
}
