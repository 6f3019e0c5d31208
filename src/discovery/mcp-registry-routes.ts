/**
 * The MCP Registry's generic API on the discovery front (openapi.yaml, `/v0.1`): the server
 * list, a server's versions, and one version, answered by mcp-registry-api.ts. Read-only: the
 * spec's optional publish and delete answer 501, as it says a registry without them does.
 * Errors on these paths take the spec's shape, `{"error": message}`, not ARD's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ArdError, ArdErrorCode, invalidArgument, notFound } from "./ard-error.js";
import type { Scope } from "./discovery-api.js";
import { sendCacheable, sendJson } from "./http-reply.js";
import { listServers, serverVersion, serverVersions } from "./mcp-registry-api.js";
import { parseServerQuery } from "./server-query.js";

const API_PREFIX = "/v0.1";
const SERVERS_PATH = `${API_PREFIX}/servers`;
const PUBLISH_PATH = `${API_PREFIX}/publish`;
/** The name and version are single path segments: the spec has them URL-encoded (`com.example%2Fweather`). */
const VERSIONS_RE = /^\/v0\.1\/servers\/([^/]+)\/versions(?:\/([^/]+))?$/;
const TENANT_PREFIX_RE = /^\/tenants\/[^/]+(?=\/)/;

/** Whether a request path (with or without its `/tenants/<tenant>` prefix) is the MCP Registry API's, whose errors take its shape. */
export function isMcpRegistryPath(pathname: string): boolean {
  const path = pathname.replace(TENANT_PREFIX_RE, "");
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
}

/** The spec's error body (openapi.yaml: `{"error": string}`). */
export const mcpRegistryError = (e: ArdError): { error: string } => ({ error: e.message });

function methodNotAllowed(method: string | undefined, path: string): ArdError {
  return new ArdError(405, ArdErrorCode.MethodNotAllowed, `${method ?? "?"} is not allowed on ${path.slice(0, 200)}`);
}

function decodeSegment(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw invalidArgument(`the ${what} in the path is not valid percent-encoding`);
  }
}

/** The routes above, for a path with the tenant prefix removed; scope is the view it answers. */
export async function routeMcpRegistry(req: IncomingMessage, res: ServerResponse, path: string, params: URLSearchParams, scope: Scope, shared: boolean): Promise<void> {
  const read = req.method === "GET" || req.method === "HEAD";
  const allow = { Allow: "GET, HEAD" };
  if (path === SERVERS_PATH) {
    if (!read) return sendJson(res, 405, mcpRegistryError(methodNotAllowed(req.method, path)), allow);
    return sendJson(res, 200, await listServers(scope, parseServerQuery(params)));
  }
  if (path === PUBLISH_PATH) {
    // The body is not read: close rather than drain it, however large.
    return sendJson(res, 501, mcpRegistryError(new ArdError(501, ArdErrorCode.NotImplemented, "Publishing is not supported by this registry")), { Connection: "close" });
  }
  const versions = VERSIONS_RE.exec(path);
  if (!versions) throw notFound(`no route ${path.slice(0, 200)}`);
  const version = versions[2];
  if (version !== undefined && req.method === "DELETE") {
    return sendJson(res, 501, mcpRegistryError(new ArdError(501, ArdErrorCode.NotImplemented, "Deletion is not supported by this registry")));
  }
  if (!read) return sendJson(res, 405, mcpRegistryError(methodNotAllowed(req.method, path)), allow);
  const extra = [...params.keys()][0];
  if (extra !== undefined) throw invalidArgument(`${JSON.stringify(extra.slice(0, 100))} is not a parameter of this path (it takes none)`);
  const name = decodeSegment(versions[1]!, "server name");
  const body = version === undefined ? await serverVersions(scope, name) : await serverVersion(scope, name, decodeSegment(version, "version"));
  return sendCacheable(req, res, body, shared);
}
