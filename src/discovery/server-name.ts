/**
 * The MCP Registry's server names for the registry's agents. The spec wants `namespace/name`,
 * the namespace a reverse-DNS domain its publisher controls: here the front's publisher domain
 * reversed (`example.com` gives `com.example`). The name is the agent type, or for a tenant's
 * own agent `<tenant>.<agent_type>`, so a name says whose agent it is, as the ARD URN does.
 * Agent types and tenant names hold no `.`, so the first `.` parts them and a name inverts
 * exactly; any name this mapping did not make is refused (null), never guessed at.
 */
import { AGENT_TYPE_RE, TENANT_RE } from "../protocol/ids.js";
import { MAX_SERVER_NAME_LENGTH, SERVER_NAME_RE } from "../domain/interop/mcp/server-json.js";

export const reverseDomain = (domain: string): string => domain.split(".").reverse().join(".");

export type ServerNameParts = { agentType: string; tenant: string | null };

/** The server name of an agent, or null when it would pass 200 characters (a long publisher and agent type together). */
export function serverName(publisher: string, agentType: string, tenant: string | null): string | null {
  const name = `${reverseDomain(publisher)}/${tenant === null ? "" : `${tenant}.`}${agentType}`;
  return name.length <= MAX_SERVER_NAME_LENGTH ? name : null;
}

/** The agent a server name stands for, or null for a name of another namespace or one no agent could have. */
export function parseServerName(name: string, publisher: string): ServerNameParts | null {
  if (name.length > MAX_SERVER_NAME_LENGTH || !SERVER_NAME_RE.test(name)) return null;
  const slash = name.indexOf("/");
  if (name.slice(0, slash) !== reverseDomain(publisher)) return null;
  const local = name.slice(slash + 1);
  const dot = local.indexOf(".");
  const tenant = dot < 0 ? null : local.slice(0, dot);
  const agentType = dot < 0 ? local : local.slice(dot + 1);
  if (tenant !== null && !TENANT_RE.test(tenant)) return null;
  if (!AGENT_TYPE_RE.test(agentType)) return null;
  return { agentType, tenant };
}
