/**
 * The MCP resources of the registry (PROTOCOL.md section 13): the capability projection (what a
 * coordinator builds its planning prompt from, updated with `notifications/resources/updated`
 * when capabilities change), and each agent's A2A card through a URI template. Both are read
 * through the SDK client, so a tenant-scoped server shows its tenant's view.
 */
import type { ListResourcesResult, ReadResourceResult, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { NotFoundError, InvalidRequestError } from "../client/errors.js";
import type { RegistryClient } from "../client/registry-client.js";
import { AGENT_TYPE_RE } from "../protocol/ids.js";
import { echo } from "./tool-error.js";

export const CAPABILITIES_URI = "registry://capabilities";
export const CARD_URI_TEMPLATE = "registry://agents/{agent_type}/card";
const CARD_URI_RE = /^registry:\/\/agents\/([^/]+)\/card$/;
const JSON_TYPE = "application/json";

/** JSON-RPC code of an unknown resource (MCP resources specification). */
export const RESOURCE_NOT_FOUND = -32002;

/** Card resources listed per `resources/list` page: one `discover` page. */
const CARDS_PER_PAGE = 100;

export const cardUri = (agentType: string): string => `registry://agents/${agentType}/card`;

export const capabilitiesResource: Resource = {
  uri: CAPABILITIES_URI,
  name: "capabilities",
  title: "Capability projection",
  description:
    "Every capability with a ready provider: name, description, providers (best first), input and output schemas, and the store revision. " +
    "Subscribe to it to hear when capabilities appear, disappear or change.",
  mimeType: JSON_TYPE,
};

export const cardTemplate: ResourceTemplate = {
  uriTemplate: CARD_URI_TEMPLATE,
  name: "agent-card",
  title: "Agent card",
  description: "The A2A Agent Card (v1.0) of one agent type, built by the registry for any registered agent.",
  mimeType: JSON_TYPE,
};

/** The projection resource, then one card per agent, a `discover` page at a time. */
export async function listResources(client: RegistryClient, cursor?: string): Promise<ListResourcesResult> {
  const page = await client.discover({ limit: CARDS_PER_PAGE, ...(cursor !== undefined ? { cursor } : {}) });
  const cards: Resource[] = page.agents.map((a) => ({
    uri: cardUri(a.id),
    name: `${a.id}-card`,
    title: `${a.id} agent card`,
    description: `A2A card of ${a.id}: ${a.capabilities.join(", ")}`,
    mimeType: JSON_TYPE,
  }));
  return { resources: cursor === undefined ? [capabilitiesResource, ...cards] : cards, ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}) };
}

/** The error's `data.uri` (MCP's resource-not-found shape) for a URI of a sensible length; none for a longer one. */
const uriData = (uri: string): { uri: string } | undefined => (uri.length <= 2048 ? { uri } : undefined);

/** `registry` gives the client once the URI is known to name a resource: one that names none is refused as such, NATS or not. */
export async function readResource(registry: () => Promise<RegistryClient>, uri: string): Promise<ReadResourceResult> {
  const json = (value: unknown): ReadResourceResult => ({ contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] });
  if (uri === CAPABILITIES_URI) return json(await (await registry()).capabilitiesAll({}));
  const agentType = CARD_URI_RE.exec(uri)?.[1];
  if (agentType === undefined || !AGENT_TYPE_RE.test(agentType)) throw new McpError(RESOURCE_NOT_FOUND, `no resource ${echo(uri)}: known are ${CAPABILITIES_URI} and ${CARD_URI_TEMPLATE}`, uriData(uri));
  const client = await registry();
  try {
    return json((await client.card(agentType)).card);
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof InvalidRequestError) throw new McpError(RESOURCE_NOT_FOUND, `no resource ${echo(uri)}: ${e.message}`, uriData(uri));
    throw e;
  }
}
