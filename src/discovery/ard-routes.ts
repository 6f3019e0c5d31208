/**
 * ARD's registry API on the discovery front (ard-spec v0.9, section 7) and the ai-catalog.json
 * manifest: which path and method is which answer (discovery-api.ts, explore.ts, agent-list.ts),
 * with every body bounded before it is parsed. The server (http-server.ts) has already checked
 * the token and taken the tenant path off; the MCP Registry's paths are mcp-registry-routes.ts's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { DiscoveryConfig } from "../config/discovery.js";
import { parseRequestBody } from "../kit/request-body.js";
import { listAgentsQuery, type AgentListQuery } from "./agent-list.js";
import { ArdError, ArdErrorCode, invalidArgument, notFound } from "./ard-error.js";
import { a2aCard, entryByIdentifier, manifest, mcpServerCard, search, type Scope } from "./discovery-api.js";
import { explore, parseExploreRequest } from "./explore.js";
import { sendCacheable, sendJson } from "./http-reply.js";
import { parseListFilter, parseOrderBy } from "./list-filter.js";
import { MAX_PAGE_SIZE, parsePageSize, parsePageToken, parseSearchRequest } from "./search-request.js";

export type ArdRouteContext = {
  config: Pick<DiscoveryConfig, "displayName" | "maxManifestEntries" | "maxBodyBytes">;
  /** Whether answers may be cached by shared caches (no token guards them). */
  shared: boolean;
};

/** ard-spec section 7.4: GET /agents pages default to 20. */
const LIST_DEFAULT_PAGE_SIZE = 20;
/** The depth a search body needs is 4 (body, query, filter, values); 16 leaves room and no more. */
const MAX_BODY_DEPTH = 16;

const AGENT_FILE_RE = /^\/agents\/([^/]+)\/(agent-card\.json|mcp-server-card\.json)$/;
const ENTRY_RE = /^\/agents\/([^/]+)$/;

/** Answers one ARD path (the tenant prefix already taken off); 404 for a path it does not know. */
export async function routeArd(req: IncomingMessage, res: ServerResponse, path: string, params: URLSearchParams, scope: Scope, ctx: ArdRouteContext): Promise<void> {
  const read = req.method === "GET" || req.method === "HEAD";
  if (path === "/.well-known/ai-catalog.json") {
    if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
    return sendCacheable(req, res, await manifest(scope, ctx.config.displayName, ctx.config.maxManifestEntries), ctx.shared);
  }
  if (path === "/search") {
    if (req.method !== "POST") return methodNotAllowed(res, req.method, path, "POST");
    const body = parseBody(await readBody(req, ctx.config.maxBodyBytes), ctx.config.maxBodyBytes, "POST /search takes a JSON object with query.text");
    return sendJson(res, 200, await search(scope, parseSearchRequest(body)));
  }
  if (path === "/explore") {
    if (req.method !== "POST") return methodNotAllowed(res, req.method, path, "POST");
    const body = parseBody(await readBody(req, ctx.config.maxBodyBytes), ctx.config.maxBodyBytes, "POST /explore takes a JSON object with resultType.facets");
    return sendJson(res, 200, await explore(scope, parseExploreRequest(body)));
  }
  if (path === "/agents") {
    if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
    return sendJson(res, 200, await listAgentsQuery(scope, agentListQuery(params)));
  }
  const file = AGENT_FILE_RE.exec(path);
  if (file) {
    if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
    const agentType = decodeSegment(file[1]!);
      return sendCacheable(req, res, file[2] === "agent-card.json" ? await a2aCard(scope, agentType) : await mcpServerCard(scope, agentType), ctx.shared);
  }
  const entry = ENTRY_RE.exec(path);
  if (entry) {
    if (!read) return methodNotAllowed(res, req.method, path, "GET, HEAD");
    return sendCacheable(req, res, await entryByIdentifier(scope, decodeSegment(entry[1]!)), ctx.shared);
  }
  throw notFound(`no route ${path.slice(0, 200)}`);
}

/** `GET /agents`' parameters, each given at most once (ARD section 7.4). */
function agentListQuery(params: URLSearchParams): AgentListQuery {
  for (const name of ["filter", "orderBy", "pageSize", "pageToken"]) {
    if (params.getAll(name).length > 1) throw invalidArgument(`${name} is given more than once; give it once`);
  }
  const pageSizeText = params.get("pageSize");
  return {
    pageSize: parsePageSize(pageSizeText === null ? undefined : /^\d{1,6}$/.test(pageSizeText) ? Number(pageSizeText) : NaN, LIST_DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    filter: parseListFilter(params.get("filter") ?? undefined),
    orderBy: parseOrderBy(params.get("orderBy") ?? undefined),
    pageToken: parsePageToken(params.get("pageToken") ?? undefined),
  };
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
  const e = new ArdError(405, ArdErrorCode.MethodNotAllowed, `${method ?? "?"} is not allowed on ${path}`);
  sendJson(res, e.status, { errorCode: e.errorCode, message: e.message }, { Allow: allow });
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
