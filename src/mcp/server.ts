/**
 * One MCP server session over the registry: the tools and resources of PROTOCOL.md section 13
 * on the SDK's protocol `Server`. The low-level `Server` rather than `McpServer`, because the
 * contract needs what `McpServer` does not give: a bad argument answered with the registry's
 * structured `invalid_request` body (McpServer's own check answers bare text), output schemas
 * that are the registry's replies, paged `resources/list`, and resource subscriptions.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import {
  CallToolRequestSchema,
  ErrorCode as RpcErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { packageVersion } from "../version.js";
import type { Logger } from "../kit/logger.js";
import { echo, type ToolErrorBody } from "./tool-error.js";
import { CAPABILITIES_URI, cardTemplate, listResources, readResource } from "./resources.js";
import { callTool, listedTool, type ToolContext } from "./tool-definition.js";
import { registryTools } from "./tools.js";

export const SERVER_NAME = "agent-registry";

export type RegistryMcpOptions = {
  /** List and accept `tasks_delegate`. */
  delegate: boolean;
  /** Offer `resources/subscribe` (a session that lives: stdio or an HTTP session; not stateless HTTP, which has nowhere to send them). */
  subscriptions: boolean;
  /** Said in the instructions, so a model knows which view it sees. */
  tenant?: string | undefined;
  /** Each call at debug; failures that are not the caller's (internal, unavailable) at warn. */
  log: Logger;
};

export type RegistryMcpServer = {
  readonly server: Server;
  /** Sends `notifications/resources/updated` for the projection when the client subscribed to it. */
  capabilitiesChanged(): Promise<void>;
};

function instructions(options: RegistryMcpOptions): string {
  return [
    `This server is the agent registry of a fleet of AI agents${options.tenant ? ` (the view of tenant ${options.tenant}: shared agents and the tenant's own)` : ""}.`,
    "To find who can do a task: capabilities_list (or search with keywords) for capability names, then capability_lookup for the providers and the input_schema a task must satisfy, or route for the single best agent.",
    "agents_discover lists the agents with their live status; agent_get and agent_card describe one agent.",
    options.delegate ? "tasks_delegate hands a task to the best agent and returns its answer." : "",
    "Failed calls return {error: {code, message, issues?}}.",
  ]
    .filter(Boolean)
    .join(" ");
}

// The SDK builds an ajv instance per Server unless given one (about 0.6 ms), and stateless HTTP
// builds a Server per request; this server never asks the client for schema-checked input anyway.
let sharedValidator: AjvJsonSchemaValidator | undefined;

export function createRegistryMcpServer(ctx: ToolContext, options: RegistryMcpOptions): RegistryMcpServer {
  const tools = registryTools({ delegate: options.delegate });
  const listed = tools.map(listedTool);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const subscribed = new Set<string>();

  const server = new Server(
    { name: SERVER_NAME, title: "Agent Registry", version: packageVersion() },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: options.subscriptions, listChanged: false } },
      instructions: instructions(options),
      jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = byName.get(req.params.name);
    if (!tool) throw new McpError(RpcErrorCode.InvalidParams, `unknown tool ${echo(req.params.name)}; tools/list names them`);
    const started = performance.now();
    const result = await callTool(tool, req.params.arguments, ctx);
    const error = result.isError ? (result.structuredContent as ToolErrorBody).error : undefined;
    const fields = { tool: tool.name, ms: Math.round((performance.now() - started) * 10) / 10, ...(error ? { code: error.code } : {}) };
    if (error && (error.code === "internal" || error.code === "unavailable")) options.log.warn({ ...fields, message: error.message }, "tool call failed");
    else options.log.debug(fields, "tool call");
    return result;
  });

  // Without NATS, the link's `unavailable` refusal (naming the URL) is the JSON-RPC error's message.
  server.setRequestHandler(ListResourcesRequestSchema, async (req) => listResources(await ctx.link.client(), req.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [cardTemplate] }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(() => ctx.link.client(), req.params.uri));
  if (options.subscriptions) {
    server.setRequestHandler(SubscribeRequestSchema, (req) => {
      if (req.params.uri !== CAPABILITIES_URI) {
        throw new McpError(RpcErrorCode.InvalidParams, `only ${CAPABILITIES_URI} sends update notifications`);
      }
      subscribed.add(req.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
      subscribed.delete(req.params.uri);
      return {};
    });
  }

  return {
    server,
    async capabilitiesChanged() {
      if (subscribed.has(CAPABILITIES_URI)) await server.sendResourceUpdated({ uri: CAPABILITIES_URI });
    },
  };
}
