/**
 * Settings of `agent-registry mcp`, from flags and environment variables (flags win), parsed
 * once with zod and frozen. The NATS connection, prefix, tenant and request timeout are the
 * CLI's common options (src/cli/context.ts). docs/configuration.md lists these rows and a test
 * checks it against this table, as it does for the service's.
 */
import { z } from "zod";

export const MCP_VARIABLES = [
  { key: "httpPort", env: "REGISTRY_MCP_HTTP_PORT", flag: "http-port", default: undefined, doc: "serve Streamable HTTP at POST /mcp on this port instead of stdio (0 picks a free port)" },
  { key: "httpHost", env: "REGISTRY_MCP_HTTP_HOST", flag: "http-host", default: "127.0.0.1", doc: "address the HTTP endpoint binds to" },
  { key: "token", env: "REGISTRY_MCP_TOKEN", flag: "http-token", default: undefined, doc: "bearer token every HTTP request must carry (never logged)" },
  { key: "allowedHosts", env: "REGISTRY_MCP_ALLOWED_HOSTS", flag: "allowed-host", default: undefined, doc: "more host names a request's Host header may name, comma-separated (loopback names and the bind address always)" },
  { key: "allowedOrigins", env: "REGISTRY_MCP_ALLOWED_ORIGINS", flag: "allowed-origin", default: undefined, doc: "origins a browser request may come from, comma-separated (unset: loopback origins only)" },
  { key: "httpSessions", env: "REGISTRY_MCP_HTTP_SESSIONS", flag: "http-sessions", default: false, doc: "keep a session per HTTP client (GET stream, resource update notifications); the client must keep reaching this process" },
  { key: "maxSessions", env: "REGISTRY_MCP_MAX_SESSIONS", flag: "max-sessions", default: 1000, doc: "live HTTP sessions at most; a new one beyond it is refused with 503" },
  { key: "sessionIdleMs", env: "REGISTRY_MCP_SESSION_IDLE_MS", flag: "session-idle-timeout", default: 1800000, doc: "an HTTP session with no request in flight and no open stream for this long is closed" },
  { key: "delegate", env: "REGISTRY_MCP_DELEGATE", flag: "enable-delegate", default: false, doc: "list the tasks_delegate tool, which sends tasks to agents" },
  { key: "delegateTimeoutMs", env: "REGISTRY_MCP_DELEGATE_TIMEOUT_MS", flag: "delegate-timeout", default: 30000, doc: "how long tasks_delegate waits for an agent when the call gives no timeout_ms" },
  { key: "maxDelegateTimeoutMs", env: "REGISTRY_MCP_MAX_DELEGATE_TIMEOUT_MS", flag: "max-delegate-timeout", default: 300000, doc: "the longest timeout_ms a tasks_delegate call may ask for" },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "level of the JSON logs written to stderr" },
] as const;

const bool = z
  .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"])])
  .transform((v) => (typeof v === "boolean" ? v : ["true", "1", "yes", "on"].includes(v)));
const list = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter((s) => s !== ""));
const ms = (max: number) => z.coerce.number().int().min(1).max(max);

export const mcpConfigSchema = z
  .object({
    httpPort: z.coerce.number().int().min(0).max(65535).optional(),
    httpHost: z.string().min(1).default("127.0.0.1"),
    token: z.string().min(1).optional(),
    allowedHosts: list.optional(),
    allowedOrigins: list.optional(),
    httpSessions: bool.default(false),
    maxSessions: z.coerce.number().int().min(1).max(1_000_000).default(1000),
    sessionIdleMs: ms(24 * 3600_000).default(1800000),
    delegate: bool.default(false),
    delegateTimeoutMs: ms(600_000).default(30000),
    maxDelegateTimeoutMs: ms(600_000).default(300000),
    logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  })
  .refine((c) => c.delegateTimeoutMs <= c.maxDelegateTimeoutMs, {
    message: "the default delegate timeout must not exceed the longest one",
    path: ["delegateTimeoutMs"],
  });

export type McpConfig = Readonly<z.output<typeof mcpConfigSchema>>;

export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpConfigError";
  }
}

type Given = string | boolean | string[] | undefined;

/** Flags win over the environment; an empty variable counts as unset. Errors name the flag and the variable. */
export function loadMcpConfig(flags: Readonly<Record<string, Given>>, env: Readonly<Record<string, string | undefined>>): McpConfig {
  const raw: Record<string, unknown> = {};
  for (const v of MCP_VARIABLES) {
    const fromEnv = env[v.env];
    if (fromEnv !== undefined && fromEnv !== "") raw[v.key] = fromEnv;
    const fromFlag = flags[v.flag];
    if (fromFlag !== undefined && !(Array.isArray(fromFlag) && fromFlag.length === 0)) raw[v.key] = fromFlag;
  }
  const parsed = mcpConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const v = MCP_VARIABLES.find((c) => c.key === issue.path[0]);
      return `${v ? `--${v.flag} / ${v.env}` : String(issue.path[0] ?? "")}: ${issue.message}`;
    });
    throw new McpConfigError(lines.join("; "));
  }
  return Object.freeze(parsed.data);
}
