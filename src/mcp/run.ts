/**
 * The MCP front's composition: a tool context over the NATS link (which may still be
 * connecting: the front serves from the start, src/mcp/nats-link.ts), then either one stdio
 * session (stdout carries protocol frames and nothing else; logs go to stderr) or the HTTP
 * endpoint, and the capability event subscription that feeds resource updates, started on the
 * connection once there is one. Runs until `until` resolves (a signal) or, on stdio, the
 * client closes the stream; then tears down in reverse order.
 */
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { NatsConnection } from "@nats-io/nats-core";
import type { RegistryClient } from "../client/registry-client.js";
import { NatsLink, type RegistryLink } from "./nats-link.js";
import type { Logger } from "../kit/logger.js";
import { watchCapabilityChanges } from "./capability-watch.js";
import type { McpConfig } from "../config/mcp.js";
import { allowedHostsFor, isLoopbackHost } from "../kit/hosts.js";
import { startMcpHttp, type McpHttpEndpoint } from "./http-server.js";
import { McpSessions } from "./http-sessions.js";
import { createRegistryMcpServer, type RegistryMcpOptions } from "./server.js";
import type { ToolContext } from "./tool-definition.js";

export type RunMcpDeps = {
  config: McpConfig;
  /** The registry through NATS; the caller owns it (and closes it after). */
  link: RegistryLink;
  log: Logger;
  /** Resolves when the process is asked to stop. */
  until: Promise<unknown>;
  /** Where stdio's frames are read and written; the process's own by default. */
  stdin?: Readable;
  stdout?: Writable;
};

type DelegateTimeouts = Pick<McpConfig, "delegateTimeoutMs" | "maxDelegateTimeoutMs">;

/** What the tools work with: the link to the registry (whose client's `call` delegates tasks, and whose connection the capability watch listens on). */
export function linkedToolContext(link: RegistryLink, config: DelegateTimeouts): ToolContext {
  return { link, delegateTimeoutMs: config.delegateTimeoutMs, maxDelegateTimeoutMs: config.maxDelegateTimeoutMs };
}

/** The tool context over a connection that is already open and stays its owner's (`serve`'s). */
export function toolContext(client: RegistryClient, nc: NatsConnection, config: DelegateTimeouts, log: Logger): ToolContext {
  return linkedToolContext(NatsLink.adopt(nc, client, log), config);
}

/** The capability event subscription on each connection the link makes, undone by the function returned. */
function watchOnConnection(link: RegistryLink, onChange: () => void, log: Logger): () => void {
  return link.onConnection((nc) => {
    const watch = watchCapabilityChanges(nc, link.subjects, onChange, log);
    return () => watch.stop();
  });
}

export type HttpFrontSettings = Pick<McpConfig, "httpHost" | "token" | "allowedHosts" | "allowedOrigins" | "delegate" | "httpSessions" | "maxSessions" | "sessionIdleMs"> & {
  httpPort: number;
};

/**
 * The HTTP endpoint over a tool context: `agent-registry mcp --http-port`, and `serve` with
 * REGISTRY_MCP_HTTP_PORT. Stateless unless sessions are on; then one capability event
 * subscription for the whole endpoint feeds every session's resource updates.
 */
export async function startHttpFront(settings: HttpFrontSettings, ctx: ToolContext, log: Logger): Promise<McpHttpEndpoint> {
  if (!isLoopbackHost(settings.httpHost) && settings.token === undefined) {
    log.warn({ host: settings.httpHost }, "the MCP endpoint is reachable from other machines without a bearer token; set REGISTRY_MCP_TOKEN");
  }
  const options: RegistryMcpOptions = { delegate: settings.delegate, subscriptions: false, tenant: ctx.link.tenant, log };
  const sessions = settings.httpSessions
    ? new McpSessions({
        maxSessions: settings.maxSessions,
        idleMs: settings.sessionIdleMs,
        newSession: () => createRegistryMcpServer(ctx, { ...options, subscriptions: true }),
        log,
      })
    : undefined;
  const stopWatch = sessions ? watchOnConnection(ctx.link, () => sessions.capabilitiesChanged(), log) : undefined;
  let endpoint: McpHttpEndpoint;
  try {
    endpoint = await startMcpHttp({
      host: settings.httpHost,
      port: settings.httpPort,
      guard: { allowedHosts: allowedHostsFor(settings.httpHost, settings.allowedHosts ?? []), allowedOrigins: settings.allowedOrigins ?? [], token: settings.token },
      newServer: () => createRegistryMcpServer(ctx, options).server,
      sessions,
      log,
    });
  } catch (err) {
    stopWatch?.();
    throw err;
  }
  log.info(
    {
      url: endpoint.url,
      port: endpoint.port,
      // Not `token`, which the loggers censor whatever it holds (LOG_REDACT_PATHS).
      auth: settings.token === undefined ? "off" : "token",
      tenant: ctx.link.tenant ?? null,
      nats: ctx.link.status().connected ? "connected" : "connecting",
      delegate: settings.delegate,
      sessions: settings.httpSessions ? { max: settings.maxSessions, idle_ms: settings.sessionIdleMs } : false,
    },
    `MCP server at ${endpoint.url}`,
  );
  if (!stopWatch) return endpoint;
  return {
    url: endpoint.url,
    port: endpoint.port,
    async close() {
      stopWatch();
      await endpoint.close();
    },
  };
}

export async function runMcp(deps: RunMcpDeps): Promise<void> {
  const { config, link, log } = deps;
  const ctx = linkedToolContext(link, config);
  const options: RegistryMcpOptions = { delegate: config.delegate, subscriptions: true, tenant: link.tenant, log };
  const teardown: Array<() => Promise<void> | void> = [];
  try {
    if (config.httpPort === undefined) {
      if (config.httpSessions) log.warn("--http-sessions has no effect without --http-port: stdio is one session already");
      const session = createRegistryMcpServer(ctx, options);
      const stopWatch = watchOnConnection(link, () => {
        session.capabilitiesChanged().catch((err: unknown) => log.warn({ err }, "could not send a resource update"));
      }, log);
      teardown.push(stopWatch);
      const stdin = deps.stdin ?? process.stdin;
      const transport = new StdioServerTransport(stdin, deps.stdout ?? process.stdout);
      const ended = new Promise<void>((resolve) => {
        stdin.on("end", resolve);
        stdin.on("close", resolve);
        transport.onclose = () => resolve();
      });
      await session.server.connect(transport);
      teardown.push(() => session.server.close());
      log.info(
        { tools: options.delegate ? "with tasks_delegate" : "queries only", tenant: link.tenant ?? null, prefix: link.subjects.prefix, nats: link.status().connected ? "connected" : "connecting" },
        "MCP server on stdio",
      );
      await Promise.race([ended, deps.until]);
    } else {
      const endpoint = await startHttpFront({ ...config, httpPort: config.httpPort }, ctx, log);
      teardown.push(() => endpoint.close());
      await deps.until;
    }
  } finally {
    for (const close of teardown.reverse()) {
      try {
        await close();
      } catch (err) {
        log.warn({ err }, "MCP teardown step failed");
      }
    }
  }
}
