/**
 * Settings of the MCP front: `agent-registry mcp`, and `serve`'s own MCP endpoint, which takes
 * the rows that have a `serve` flag under the `mcp` prefix (`--mcp-http-port`,
 * `config.mcpHttpPort`). The NATS connection, prefix, tenant and request timeout are the CLI's
 * common options (src/cli/context.ts). docs/configuration.md lists these rows and a test checks
 * it against this table, as it does for the service's.
 */
import { z } from "zod";
import { bool, int, list, logLevel } from "./fields.js";
import { loadSettings, type Env, type GivenFlag, type SettingSources } from "./load.js";

export const MCP_VARIABLES = [
  { key: "httpPort", env: "REGISTRY_MCP_HTTP_PORT", flag: "http-port", default: undefined, doc: "serve Streamable HTTP at POST /mcp on this port instead of stdio (0 picks a free port)", serve: { flag: "mcp-http-port", doc: "also serve the MCP endpoint (Streamable HTTP at POST /mcp, docs/mcp.md) on this port; 0 picks a free port; unset: off" } },
  { key: "httpHost", env: "REGISTRY_MCP_HTTP_HOST", flag: "http-host", default: "127.0.0.1", doc: "address the HTTP endpoint binds to", serve: { flag: "mcp-http-host", doc: "address the MCP endpoint binds to" } },
  { key: "token", env: "REGISTRY_MCP_TOKEN", flag: "http-token", default: undefined, doc: "bearer token every HTTP request must carry (never logged)", serve: { flag: "mcp-token", doc: "bearer token every MCP request must carry (never logged)" } },
  { key: "allowedHosts", env: "REGISTRY_MCP_ALLOWED_HOSTS", flag: "allowed-host", default: undefined, doc: "more host names a request's Host header may name, comma-separated (loopback names and the bind address always)", serve: { flag: "mcp-allowed-hosts", doc: "more host names an MCP request's Host may name, comma-separated (loopback names and the bind address always)" } },
  { key: "allowedOrigins", env: "REGISTRY_MCP_ALLOWED_ORIGINS", flag: "allowed-origin", default: undefined, doc: "origins a browser request may come from, comma-separated (unset: loopback origins only)", serve: { flag: "mcp-allowed-origins", doc: "origins a browser's MCP request may come from, comma-separated (unset: loopback origins only)" } },
  { key: "httpSessions", env: "REGISTRY_MCP_HTTP_SESSIONS", flag: "http-sessions", default: false, doc: "keep a session per HTTP client (GET stream, resource update notifications); the client must keep reaching this process", serve: { flag: "mcp-http-sessions", doc: "keep a session per MCP client (GET stream, resource update notifications); clients must keep reaching this replica" } },
  { key: "maxSessions", env: "REGISTRY_MCP_MAX_SESSIONS", flag: "max-sessions", default: 1000, doc: "live HTTP sessions at most; a new one beyond it is refused with 503", serve: { flag: "mcp-max-sessions", doc: "live MCP sessions at most; a new one beyond it is refused with 503" } },
  { key: "sessionIdleMs", env: "REGISTRY_MCP_SESSION_IDLE_MS", flag: "session-idle-timeout", default: 1800000, doc: "an HTTP session with no request in flight and no open stream for this long is closed", serve: { flag: "mcp-session-idle-ms", doc: "an MCP session with no request in flight and no open stream for this long is closed" } },
  { key: "delegate", env: "REGISTRY_MCP_DELEGATE", flag: "enable-delegate", default: false, doc: "list the tasks_delegate tool, which sends tasks to agents", serve: { flag: "mcp-delegate", doc: "list the tasks_delegate tool on the MCP endpoint" } },
  { key: "delegateTimeoutMs", env: "REGISTRY_MCP_DELEGATE_TIMEOUT_MS", flag: "delegate-timeout", default: 30000, doc: "how long tasks_delegate waits for an agent when the call gives no timeout_ms", serve: { flag: "mcp-delegate-timeout-ms", doc: "how long tasks_delegate waits when the call gives no timeout_ms" } },
  { key: "maxDelegateTimeoutMs", env: "REGISTRY_MCP_MAX_DELEGATE_TIMEOUT_MS", flag: "max-delegate-timeout", default: 300000, doc: "the longest timeout_ms a tasks_delegate call may ask for", serve: { flag: "mcp-max-delegate-timeout-ms", doc: "the longest timeout_ms a tasks_delegate call may ask for" } },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "level of the JSON logs written to stderr" },
] as const;

const ms = (max: number) => int(1, max);

/** The fields of the MCP settings, for `serve` to take under its prefix. */
export const mcpSettingFields = {
  httpPort: int(0, 65535).optional(),
  httpHost: z.string().min(1).default("127.0.0.1"),
  token: z.string().min(1).optional(),
  allowedHosts: list.optional(),
  allowedOrigins: list.optional(),
  httpSessions: bool.default(false),
  maxSessions: int(1, 1_000_000).default(1000),
  sessionIdleMs: ms(24 * 3600_000).default(1800000),
  delegate: bool.default(false),
  delegateTimeoutMs: ms(600_000).default(30000),
  maxDelegateTimeoutMs: ms(600_000).default(300000),
  logLevel,
};

export const DELEGATE_TIMEOUTS_PROBLEM = "the default delegate timeout must not exceed the longest one";

export const mcpConfigSchema = z.object(mcpSettingFields).refine((c) => c.delegateTimeoutMs <= c.maxDelegateTimeoutMs, {
  message: DELEGATE_TIMEOUTS_PROBLEM,
  path: ["delegateTimeoutMs"],
});

export type McpConfig = Readonly<z.output<typeof mcpConfigSchema>>;

/** Flags win over the environment; an empty variable counts as unset. */
export function loadMcpConfig(flags: Readonly<Record<string, GivenFlag>>, env: Env, overrides?: SettingSources["overrides"]): McpConfig {
  return loadSettings(MCP_VARIABLES, mcpConfigSchema, { env, flags, ...(overrides ? { overrides } : {}) });
}
