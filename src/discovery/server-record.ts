/**
 * An MCP-kind agent as the MCP Registry serves a server: a `server.json` record wrapped as the
 * generic API's ServerResponse (`server`, and in `_meta` the registry-managed metadata under
 * `io.modelcontextprotocol.registry/official`). Pure: the view in, the record out.
 *
 * What a server.json says that the registry does not know is left out rather than made up: no
 * `packages` (the registry runs nothing), no `repository`, `websiteUrl` or `icons`. `remotes`
 * holds the spec's `url` when it is an http(s) URL; a server reached over NATS only has none.
 */
import type { AgentView } from "../protocol/messages.js";
import { serverName } from "./server-name.js";

/** The `$id` of the server.schema.json the records follow (test/fixtures/mcp-registry). */
export const SERVER_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json";
export const OFFICIAL_META_KEY = "io.modelcontextprotocol.registry/official";
/** server.schema.json: `description` and `title` are at most 100 characters. */
const MAX_TEXT = 100;

export type Remote = { type: "streamable-http"; url: string };
export type ServerDetail = {
  $schema: string;
  name: string;
  description: string;
  version: string;
  title?: string;
  remotes?: Remote[];
};
export type OfficialMeta = { status: "active" | "deprecated" | "deleted"; publishedAt: string; updatedAt: string; isLatest: boolean };
export type ServerResponse = { server: ServerDetail; _meta: { [OFFICIAL_META_KEY]: OfficialMeta } };

/** At most `max` characters (code points, as JSON Schema's maxLength counts them), an ellipsis marking a cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/**
 * The spec's `url` as a remote: MCP's HTTP transport is streamable HTTP (SSE is its
 * deprecated predecessor, and the spec does not say which a URL speaks), so an http(s) URL is
 * one `streamable-http` remote; anything else (no URL, another scheme) is no remote.
 */
export function remotesOf(url: string | undefined): Remote[] | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? [{ type: "streamable-http", url }] : undefined;
  } catch {
    return undefined;
  }
}

/** The record of an MCP server agent, or null when its name would not fit the 200 characters a server name may have. */
export function serverRecord(view: AgentView, publisher: string): ServerResponse | null {
  const name = serverName(publisher, view.agent_type, view.tenant_scope);
  if (name === null) return null;
  const description = view.description.trim() !== "" ? view.description : (view.display_name ?? view.agent_type);
  const server: ServerDetail = { $schema: SERVER_SCHEMA_URL, name, description: clip(description, MAX_TEXT), version: view.version };
  if (view.display_name !== undefined && view.display_name.trim() !== "") server.title = clip(view.display_name, MAX_TEXT);
  const remotes = remotesOf(view.url);
  if (remotes) server.remotes = remotes;
  // The registry keeps one spec per agent type (docs/protocol.md section 9): the record served
  // is the only version, so it is the latest. `registered_at` is the agent type's first
  // registration, `updated_at` (v1.2) the spec's last change; a registry before v1.2 has only the first.
  // An operator's deprecation (v1.2) is MCP Registry's own "deprecated" status: still served, marked.
  const official: OfficialMeta = { status: view.deprecated !== undefined ? "deprecated" : "active", publishedAt: view.registered_at, updatedAt: view.updated_at ?? view.registered_at, isLatest: true };
  return { server, _meta: { [OFFICIAL_META_KEY]: official } };
}
