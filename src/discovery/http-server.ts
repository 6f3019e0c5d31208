/**
 * The discovery front's HTTP server (docs/discovery.md): ARD's registry API and the
 * ai-catalog.json manifest, answered by discovery-api.ts and explore.ts, and the MCP Registry's
 * generic API under /v0.1 (mcp-registry-routes.ts). Read-only (the POSTs,
 * /search and /explore, read), every body bounded before it is parsed, every reply paged, and every path also
 * under `/tenants/<tenant>/` for that tenant's view. Built apart from listen, as the ops server.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RegistryClient } from "../client/registry-client.js";
import type { NatsConnection } from "@nats-io/nats-core";
import type { DiscoveryConfig } from "../config/discovery.js";
import { parseRequestBody } from "../kit/request-body.js";
import { redactUrl } from "../kit/log-redaction.js";
import type { Logger } from "../kit/logger.js";
import { TENANT_RE } from "../protocol/ids.js";
import { ArdError, ArdErrorCode, invalidArgument, notFound } from "./ard-error.js";
import { bearerRefusal } from "./bearer.js";
import { a2aCard, entryByIdentifier, manifest, mcpServerCard, search, type Scope } from "./discovery-api.js";
import { explore, parseExploreRequest } from "./explore.js";
import { sendCacheable, sendJson } from "./http-reply.js";
import { isMcpRegistryPath, mcpRegistryError, routeMcpRegistry } from "./mcp-registry-routes.js";
import { mapRegistryFailure } from "./registry-failure.js";
import { MAX_PAGE_SIZE, parsePageSize, parsePageToken, parseSearchRequest } from "./search-request.js";
import { listAgentsQuery } from "./agent-list.js";
import { parseListFilter, parseOrderBy } from "./list-filter.js";

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

/** ard-spec section 7.4: GET /agents pages default to 20. */
const LIST_DEFAULT_PAGE_SIZE = 20;
/** The depth a search body needs is 4 (body, query, filter, values); 16 leaves room and no more. */
const MAX_BODY_DEPTH = 16;

const TENANT_PATH_RE = /^\/tenants\/([^/]+)(\/.*)$/;
const AGENT_FILE_RE = /^\/agents\/([^/]+)\/(agent-card\.json|mcp-server-card\.json)$/;
const ENTRY_RE = /^\/agents\/([^/]+)$/;

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

/** The body's bytes, refused with 413 as soon as they pass the limit (the rest is not read). */
function readBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > maxBytes) {
      reject(new ArdError(413, ArdErrorCode.PayloadTooLarge, `body is ${declared} bytes; the limit is ${maxBytes}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners("data");
        req.pause();
        reject(new ArdError(413, ArdErrorCode.PayloadTooLarge, `body is more than ${maxBytes} bytes; the limit is ${maxBytes}`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function methodNotAllowed(res: ServerResponse, method: string | undefined, path: string, allow: string): void {
  sendError(res, new ArdError(405, ArdErrorCode.MethodNotAllowed, `${method ?? "?"} is not allowed on ${path}`), { Allow: allow });
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
    const read = req.method === "GET" || req.method === "HEAD";
    if (path === "/.well-known/ai-catalog.json") {
      if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
      return sendCacheable(req, res, await manifest(scopeOf(tenant), config.displayName, config.maxManifestEntries), shared);
    }
    if (path === "/search") {
      if (req.method !== "POST") return methodNotAllowed(res, req.method, path, "POST");
      const body = parseBody(await readBody(req, config.maxBodyBytes), config.maxBodyBytes, "POST /search takes a JSON object with query.text");
      return sendJson(res, 200, await search(scopeOf(tenant), parseSearchRequest(body)));
    }
    if (path === "/explore") {
      if (req.method !== "POST") return methodNotAllowed(res, req.method, path, "POST");
      const body = parseBody(await readBody(req, config.maxBodyBytes), config.maxBodyBytes, "POST /explore takes a JSON object with resultType.facets");
      return sendJson(res, 200, await explore(scopeOf(tenant), parseExploreRequest(body)));
    }
    if (path === "/agents") {
      if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
      for (const name of ["filter", "orderBy", "pageSize", "pageToken"]) {
        if (url.searchParams.getAll(name).length > 1) throw invalidArgument(`${name} is given more than once; give it once`);
      }
      const pageSizeText = url.searchParams.get("pageSize");
      const pageSize = parsePageSize(pageSizeText === null ? undefined : /^\d{1,6}$/.test(pageSizeText) ? Number(pageSizeText) : NaN, LIST_DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const filter = parseListFilter(url.searchParams.get("filter") ?? undefined);
      const orderBy = parseOrderBy(url.searchParams.get("orderBy") ?? undefined);
      const pageToken = parsePageToken(url.searchParams.get("pageToken") ?? undefined);
      return sendJson(res, 200, await listAgentsQuery(scopeOf(tenant), { pageSize, pageToken, filter, orderBy }));
    }
    const file = AGENT_FILE_RE.exec(path);
    if (file) {
      if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
      const agentType = decodeSegment(file[1]!);
      const scope = scopeOf(tenant);
      return sendCacheable(req, res, file[2] === "agent-card.json" ? await a2aCard(scope, agentType) : await mcpServerCard(scope, agentType), shared);
    }
    const entry = ENTRY_RE.exec(path);
    if (entry) {
      if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
      return sendCacheable(req, res, await entryByIdentifier(scopeOf(tenant), decodeSegment(entry[1]!)), shared);
    }
    throw notFound(`no route ${path.slice(0, 200)}`);
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
    listen() {
      if (server) return Promise.resolve(server.address() ? (server.address() as AddressInfo).port : 0);
      const s = createServer(handle);
      s.requestTimeout = 10_000;
      s.headersTimeout = 5_000;
      s.keepAliveTimeout = 5_000;
      s.maxHeadersCount = 50;
      s.on("clientError", (_err, socket) => {
        if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        else socket.destroy();
      });
      server = s;
      return new Promise<number>((resolve, reject) => {
        s.once("error", (err) => {
          server = undefined;
          reject(err);
        });
        s.listen({ host: config.httpHost, port: config.httpPort }, () => {
          s.removeAllListeners("error");
          s.on("error", (err) => log.error({ err }, "discovery server error"));
          const port = (s.address() as AddressInfo).port;
          if (config.publicUrl === undefined) baseUrl = `http://${config.httpHost.includes(":") ? `[${config.httpHost}]` : config.httpHost}:${port}`;
          resolve(port);
        });
      });
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

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidArgument("the path is not valid percent-encoding");
  }
}

/** kit/request-body.ts's checks (UTF-8, JSON object, depth, forbidden keys) as ARD errors. */
function parseBody(bytes: Uint8Array, maxBytes: number, expected: string): Record<string, unknown> {
  if (bytes.length === 0) throw invalidArgument(`the body is empty; ${expected}`);
  try {
    return parseRequestBody(bytes, { maxBytes, maxDepth: MAX_BODY_DEPTH });
  } catch (e) {
    throw invalidArgument((e as Error).message);
  }
}
