/**
 * The MCP endpoint beside the API (REGISTRY_MCP_HTTP_PORT).
 */
import { RegistryClient } from "../client/registry-client.js";
import type { StartContext, Nats } from "./context.js";

/**
 * With REGISTRY_MCP_HTTP_PORT, the MCP endpoint of PROTOCOL.md section 13 beside the API: the
 * front of `agent-registry mcp --http-port`, asking the registry (whichever replica answers)
 * through the SDK client on this replica's connection, so it is a client like any other.
 * Closed before the endpoints stop, so its last answers still reach the API.
 */
export async function serveMcp(ctx: StartContext, { nc }: Nats): Promise<void> {
  const { config } = ctx;
  if (config.mcpHttpPort === undefined) return;
  // Loaded only when asked for: the MCP SDK is not part of every start.
  const { startHttpFront, toolContext } = await import("../mcp/run.js");
  const client = new RegistryClient(nc, { prefix: config.prefix, timeoutMs: config.requestTimeoutMs });
  const log = ctx.root.child({ component: "mcp" });
  const tools = toolContext(client, nc, { delegateTimeoutMs: config.mcpDelegateTimeoutMs, maxDelegateTimeoutMs: config.mcpMaxDelegateTimeoutMs }, log);
  const settings = {
    httpPort: config.mcpHttpPort,
    httpHost: config.mcpHttpHost,
    token: config.mcpToken,
    allowedHosts: config.mcpAllowedHosts,
    allowedOrigins: config.mcpAllowedOrigins,
    delegate: config.mcpDelegate,
    httpSessions: config.mcpHttpSessions,
    maxSessions: config.mcpMaxSessions,
    sessionIdleMs: config.mcpSessionIdleMs,
  };
  const endpoint = await startHttpFront(settings, tools, log);
  ctx.teardown.defer("closing the MCP endpoint", () => endpoint.close());
}
