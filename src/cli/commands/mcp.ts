/**
 * `mcp`: the registry as an MCP server (PROTOCOL.md section 13) for LLM coordinators, over
 * stdio (what an MCP client spawns) or Streamable HTTP. Logs are JSON lines on stderr: on
 * stdio, stdout belongs to the protocol. It serves even when NATS cannot be reached yet,
 * connecting in the background, so a client sees `registry_health` say why rather than a
 * closed connection.
 */
import { connectionOptions } from "../../client/connection.js";
import { MCP_VARIABLES, loadMcpConfig } from "../../config/mcp.js";
import { ConfigError } from "../../config/load.js";
import { connectOptions, ExitCode, UsageError, type Command, type OptionSpec } from "../context.js";

const flagDoc = (flag: (typeof MCP_VARIABLES)[number]["flag"]): string => {
  const v = MCP_VARIABLES.find((c) => c.flag === flag)!;
  return `${v.doc} (env ${v.env}${v.default !== undefined && v.default !== false ? `, default ${String(v.default)}` : ""})`;
};

const options: Record<string, OptionSpec> = {
  "http-port": { type: "string", value: "PORT", description: flagDoc("http-port") },
  "http-host": { type: "string", value: "HOST", description: flagDoc("http-host") },
  "http-token": { type: "string", value: "TOKEN", description: flagDoc("http-token") },
  "allowed-host": { type: "string", multiple: true, value: "NAME", description: flagDoc("allowed-host") },
  "allowed-origin": { type: "string", multiple: true, value: "ORIGIN", description: flagDoc("allowed-origin") },
  "http-sessions": { type: "boolean", description: flagDoc("http-sessions") },
  "max-sessions": { type: "string", value: "N", description: flagDoc("max-sessions") },
  "session-idle-timeout": { type: "string", value: "MS", description: flagDoc("session-idle-timeout") },
  "enable-delegate": { type: "boolean", description: flagDoc("enable-delegate") },
  "delegate-timeout": { type: "string", value: "MS", description: flagDoc("delegate-timeout") },
  "max-delegate-timeout": { type: "string", value: "MS", description: flagDoc("max-delegate-timeout") },
  "log-level": { type: "string", value: "LEVEL", description: flagDoc("log-level") },
};

export const mcpCommand: Command = {
  name: "mcp",
  summary: "serve the registry to MCP clients (LLM coordinators) over stdio, or Streamable HTTP with --http-port; starts while NATS is down and connects in the background",
  usage: "mcp [--http-port PORT [--http-host HOST] [--http-token TOKEN] [--allowed-host NAME]... [--allowed-origin ORIGIN]... [--http-sessions [--max-sessions N] [--session-idle-timeout MS]]] [--enable-delegate]",
  examples: [
    "agent-registry mcp --nats nats://127.0.0.1:4222",
    "agent-registry mcp --tenant acme --enable-delegate --delegate-timeout 60000",
    "REGISTRY_MCP_TOKEN=s3cret agent-registry mcp --http-port 3001",
    "agent-registry mcp --http-port 3001 --http-sessions --max-sessions 200",
  ],
  options,
  args: { min: 0, max: 0 },
  async run(ctx) {
    let config;
    try {
      config = loadMcpConfig(ctx.values, ctx.io.env);
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.problems.join("; "));
      throw e;
    }
    // Loaded here, so the other commands do not load the MCP SDK.
    const [{ createLogger }, { runMcp }, { NatsLink }] = await Promise.all([import("../../kit/create-logger.js"), import("../../mcp/run.js"), import("../../mcp/nats-link.js")]);
    const log = createLogger({ level: config.logLevel, base: { component: "mcp" }, to: "stderr" });
    // Built before serving: a credentials or nkey file that cannot be read is a mistake to fix, not an outage to wait out.
    const connection = connectionOptions(connectOptions(ctx.values, ctx.io.env, ctx.timeoutMs));
    const link = NatsLink.connectInBackground({ connection, client: { prefix: ctx.prefix, tenant: ctx.tenant, timeoutMs: ctx.timeoutMs }, log });
    try {
      await runMcp({ config, link, log, until: ctx.io.interrupted() });
    } finally {
      await link.close();
    }
    return ExitCode.Ok;
  },
};
