/**
 * An agent of the fleet as an ARD catalog entry (ard-spec v0.9, section 4.2): a URN
 * identifier anchored on the configured publisher domain, a media type, and a `url` to the
 * artifact this front serves (the A2A card, or for MCP-kind agents the MCP server card).
 * Pure: the view in, the entry out.
 */
import type { AgentView } from "../protocol/messages.js";

export const A2A_CARD_TYPE = "application/a2a-agent-card+json";
export const MCP_SERVER_CARD_TYPE = "application/mcp-server-card+json";
export const REGISTRY_TYPE = "application/ai-registry+json";

/** The URN namespace of the shared agents; a tenant's agents take the tenant's name (tenant names are lower case, so none is "_shared"-like). */
export const SHARED_NAMESPACE = "shared";

export type CatalogEntry = {
  identifier: string;
  displayName: string;
  type: string;
  url: string;
  description?: string;
  tags?: string[];
  capabilities?: string[];
  representativeQueries?: string[];
  version?: string;
  updatedAt?: string;
  metadata?: Record<string, string | number | boolean | null>;
};

/** Where the entries point: the publisher of their URNs and the base URL of this front (with its tenant path, if any). */
export type EntryLinks = { publisher: string; baseUrl: string };

/** MCP servers and single tools are both served to MCP clients; the rest are A2A agents. */
export const isMcpKind = (kind: string): boolean => kind === "mcp_server" || kind === "tool";

export function entryIdentifier(publisher: string, agentType: string, tenant: string | null): string {
  return `urn:air:${publisher}:${tenant ?? SHARED_NAMESPACE}:${agentType}`;
}

/** The parts of a URN this front issued, or null for any other URN (another publisher's included). */
export function parseIdentifier(urn: string, publisher: string): { namespace: string; agentType: string } | null {
  const parts = urn.split(":");
  if (parts.length !== 5 || parts[0] !== "urn" || parts[1] !== "air" || parts[2]!.toLowerCase() !== publisher) return null;
  return { namespace: parts[3]!, agentType: parts[4]! };
}

export function artifactUrl(links: EntryLinks, agent: Pick<AgentView, "agent_type" | "kind">): string {
  const file = isMcpKind(agent.kind) ? "mcp-server-card.json" : "agent-card.json";
  return `${links.baseUrl}/agents/${encodeURIComponent(agent.agent_type)}/${file}`;
}

const MAX_TAGS = 64;
/** ai-catalog.schema.json: representativeQueries has 2 to 5 items. */
const MIN_QUERIES = 2;
const MAX_QUERIES = 5;

/**
 * The spec's own representative queries (v1.2); for a spec without them, the capabilities'
 * examples stand in: they are the sentences an agent's author wrote for what callers ask.
 */
function representativeQueries(agent: AgentView): string[] | undefined {
  if (agent.representative_queries) return agent.representative_queries;
  const queries = new Set<string>();
  for (const capability of agent.capabilities) {
    for (const example of capability.examples) {
      if (queries.size >= MAX_QUERIES) break;
      if (example.trim() !== "") queries.add(example);
    }
  }
  return queries.size >= MIN_QUERIES ? [...queries] : undefined;
}

function deprecationMetadata(d: NonNullable<AgentView["deprecated"]>): Record<string, string | boolean> {
  return { deprecated: true, deprecated_at: d.at, ...(d.reason !== undefined ? { deprecation_reason: d.reason } : {}), ...(d.successor !== undefined ? { successor: d.successor } : {}) };
}

function capabilityTags(agent: AgentView): string[] {
  const tags = new Set<string>();
  for (const capability of agent.capabilities) for (const tag of capability.tags) if (tags.size < MAX_TAGS) tags.add(tag);
  return [...tags];
}

export function catalogEntry(agent: AgentView, links: EntryLinks): CatalogEntry {
  const entry: CatalogEntry = {
    identifier: entryIdentifier(links.publisher, agent.agent_type, agent.tenant_scope),
    displayName: agent.display_name ?? agent.agent_type,
    type: isMcpKind(agent.kind) ? MCP_SERVER_CARD_TYPE : A2A_CARD_TYPE,
    url: artifactUrl(links, agent),
    version: agent.version,
    // v1.2 registries say when the spec last changed; an older one only when it was first registered.
    updatedAt: agent.updated_at ?? agent.registered_at,
    capabilities: agent.capabilities.map((c) => c.name),
    metadata: {
      agent_type: agent.agent_type,
      kind: agent.kind,
      status: agent.status,
      instance_count: agent.instance_count,
      tenant: agent.tenant_scope,
      // v1.2 (docs/trust.md, "Deprecation"): still listed and callable; a crawler learns what to move to.
      ...(agent.deprecated !== undefined ? deprecationMetadata(agent.deprecated) : {}),
    },
  };
  if (agent.description !== "") entry.description = agent.description;
  const tags = capabilityTags(agent);
  if (tags.length > 0) entry.tags = tags;
  const queries = representativeQueries(agent);
  if (queries) entry.representativeQueries = queries;
  return entry;
}
