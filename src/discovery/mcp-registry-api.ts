/**
 * What the MCP Registry's generic API (openapi.yaml, `/v0.1`) answers, over the SDK's
 * RegistryClient: the view's agents of kind `mcp_server` as server records (server-record.ts),
 * listed from the registry's `list` (kind `mcp_server`, in its agent_type order) and looked up
 * with `get`. Kind `tool` (a single tool or a composition) is not a server and is not listed.
 *
 * The registry keeps one spec per agent type (docs/protocol.md section 9), not a history: a
 * server has one version, its current one, which is its latest.
 */
import type { AgentView } from "../protocol/messages.js";
import { notFound } from "./ard-error.js";
import { isApprovedView } from "./approved-view.js";
import type { Scope } from "./discovery-api.js";
import { serverRecord, type ServerResponse } from "./server-record.js";
import { parseServerName } from "./server-name.js";
import { scanList, type ScanPosition } from "./registry-scan.js";
import { encodeServerCursor, type ServerQuery } from "./server-query.js";

export type ServerList = { servers: ServerResponse[]; metadata: { count: number; nextCursor?: string } };

function matches(record: ServerResponse, view: AgentView, query: ServerQuery): boolean {
  if (query.search !== undefined && !record.server.name.toLowerCase().includes(query.search)) return false;
  if (query.version !== undefined && view.version !== query.version) return false;
  if (query.updatedSince !== undefined && !(Date.parse(view.updated_at ?? view.registered_at) > query.updatedSince)) return false;
  return true;
}

function page(servers: ServerResponse[], next: ScanPosition | undefined, query: ServerQuery): ServerList {
  const metadata: ServerList["metadata"] = { count: servers.length };
  if (next) metadata.nextCursor = encodeServerCursor(next, query);
  return { servers, metadata };
}

/** `GET /v0.1/servers`: the view's MCP servers in agent_type order, filtered, `limit` at a time (registry-scan.ts). */
export async function listServers(scope: Scope, query: ServerQuery): Promise<ServerList> {
  const { items, next } = await scanList(scope, { kind: "mcp_server" }, query.start, query.limit, (view) => {
    const record = isApprovedView(view) ? serverRecord(view, scope.links.publisher) : null;
    return record && matches(record, view, query) ? record : null;
  });
  return page(items, next, query);
}

/** The record of a server name in this view; 404 for a name this front did not issue, or one of an agent not here or not an MCP server. */
export async function serverByName(scope: Scope, name: string): Promise<ServerResponse> {
  const missing = () => notFound(`Server not found: ${JSON.stringify(name.slice(0, 300))}`);
  const parts = parseServerName(name, scope.links.publisher);
  if (!parts || (parts.tenant !== null && parts.tenant !== scope.tenant)) throw missing();
  let view: AgentView;
  try {
    view = (await scope.client.get({ agent_type: parts.agentType, instances_limit: 1 })).agent;
  } catch (e) {
    if ((e as { code?: unknown }).code === "not_found") throw missing();
    throw e;
  }
  if (view.kind !== "mcp_server" || view.status === "deregistered" || !isApprovedView(view)) throw missing();
  const record = serverRecord(view, scope.links.publisher);
  // Inverting exactly: a shared agent's name does not reach a tenant's agent of the same type, nor the reverse.
  if (!record || record.server.name !== name) throw missing();
  return record;
}

/** `GET /v0.1/servers/{serverName}/versions`: the one version the registry keeps. */
export async function serverVersions(scope: Scope, name: string): Promise<ServerList> {
  const record = await serverByName(scope, name);
  return { servers: [record], metadata: { count: 1 } };
}

/** `GET /v0.1/servers/{serverName}/versions/{version}`: `latest`, or the current version named exactly. */
export async function serverVersion(scope: Scope, name: string, version: string): Promise<ServerResponse> {
  const record = await serverByName(scope, name);
  if (version !== "latest" && version !== record.server.version) {
    throw notFound(`Server version not found: ${JSON.stringify(name.slice(0, 300))} has version ${record.server.version} only`);
  }
  return record;
}
