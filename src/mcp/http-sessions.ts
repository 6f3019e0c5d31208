/**
 * The live MCP sessions of the HTTP endpoint when sessions are on (`--http-sessions`): one
 * `Server` and one session-mode `StreamableHTTPServerTransport` per client, found by the
 * `Mcp-Session-Id` header. The SDK's transport does everything protocol-level (the SSE stream
 * of GET, DELETE, the session header on each request); this table only routes requests to it
 * and bounds what sessions cost: at most `maxSessions` live (an `initialize` beyond that is
 * refused with 503), and a session with nothing in flight for `idleMs` is closed, freeing its
 * server, transport and resource subscriptions. Sessions live in this process's memory, so a
 * client must keep reaching the same replica (docs/mcp.md).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { guarded } from "../kit/guarded.js";
import type { Logger } from "../kit/logger.js";
import type { RegistryMcpServer } from "./server.js";

export type SessionLimits = {
  /** Live sessions at most; a new `initialize` beyond it is answered 503. */
  maxSessions: number;
  /** A session with no request in flight and no open stream for this long is closed. */
  idleMs: number;
};

export type McpSessionsOptions = SessionLimits & {
  /** A server for one session, offering resource subscriptions. */
  newSession: () => RegistryMcpServer;
  log: Logger;
};

type Live = {
  readonly session: RegistryMcpServer;
  readonly transport: StreamableHTTPServerTransport;
  /** Requests and streams (GET) of this session still open: while any is, it is not idle. */
  active: number;
  idle: NodeJS.Timeout | undefined;
};

/** Writes a JSON-RPC error with no id, as the SDK's transport does for its own refusals. */
export function rpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** The JSON-RPC code the SDK gives an unknown session (with HTTP 404). */
const SESSION_NOT_FOUND = -32001;

const REFUSAL_LOG_EVERY_MS = 60_000;

export class McpSessions {
  private readonly live = new Map<string, Live>();
  /** `initialize` requests in flight: they count against the limit before their session exists. */
  private starting = 0;
  private closed = false;
  private refused = 0;
  private refusalLoggedAt = -Infinity;

  constructor(private readonly options: McpSessionsOptions) {}

  /** One request to the endpoint (the guard has passed); `body` is the parsed POST body. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const live = this.live.get(id);
      if (!live) return rpcError(res, 404, SESSION_NOT_FOUND, "Session not found: it ended, expired or never existed; initialize a new one");
      return this.forward(live, req, res, body);
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return rpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required (only an initialize request starts a session)");
    }
    if (this.closed) return rpcError(res, 503, -32000, "the MCP endpoint is closing");
    if (this.live.size + this.starting >= this.options.maxSessions) {
      this.refused++;
      // A storm of initialize requests at the limit is one warning a minute, with the count.
      if (Date.now() - this.refusalLoggedAt >= REFUSAL_LOG_EVERY_MS) {
        this.options.log.warn({ sessions: this.live.size, max: this.options.maxSessions, refused: this.refused }, "refused new MCP sessions: at the session limit");
        this.refusalLoggedAt = Date.now();
        this.refused = 0;
      }
      return rpcError(res, 503, -32000, `too many MCP sessions (limit ${this.options.maxSessions}); end one with DELETE or try again later`, { "retry-after": "5" });
    }
    await this.start(req, res, body);
  }

  private async start(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const session = this.options.newSession();
    let live: Live | undefined;
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Answers to POSTs as JSON; notifications go on the session's GET stream.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        // The endpoint closed while this initialize was read: no session outlives it.
        if (this.closed) return;
        // Counted busy until this initialize's response closes.
        live = { session, transport, active: 1, idle: undefined };
        this.live.set(id, live);
        this.options.log.debug({ session: id, sessions: this.live.size }, "MCP session started");
      },
      onsessionclosed: (id) => this.end(id, "ended by the client"),
    });
    // However the transport ends (DELETE, idle, endpoint close), the session leaves the table.
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.end(transport.sessionId, "closed");
    };
    res.once("close", () => {
      if (live) this.settle(live);
    });
    this.starting++;
    try {
      await session.server.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      this.starting--;
      // An initialize the transport refused (a batch, a bad message) left no session behind.
      if (!live) await closeQuietly(session, this.options.log);
    }
  }

  private async forward(live: Live, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    live.active++;
    if (live.idle !== undefined) clearTimeout(live.idle);
    live.idle = undefined;
    // A GET's stream stays open after handleRequest returns: the session is busy until it closes.
    res.once("close", () => this.settle(live));
    await live.transport.handleRequest(req, res, body);
  }

  /** One request or stream of the session ended; with none left, the idle clock starts. */
  private settle(live: Live): void {
    live.active = Math.max(0, live.active - 1);
    const id = live.transport.sessionId;
    if (live.active > 0 || id === undefined || this.live.get(id) !== live) return;
    live.idle = setTimeout(
      guarded(this.options.log, "closing an idle MCP session", () => this.end(id, "idle")),
      this.options.idleMs,
    );
    live.idle.unref();
  }

  /** Sends `notifications/resources/updated` to every session that subscribed to the projection. */
  capabilitiesChanged(): void {
    for (const [id, live] of this.live) {
      live.session.capabilitiesChanged().catch((err: unknown) => this.options.log.warn({ err, session: id }, "could not send a resource update"));
    }
  }

  /** Ends every session; new ones are refused from now on. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.live.values()];
    for (const id of [...this.live.keys()]) this.end(id, "endpoint closing");
    await Promise.all(all.map((live) => live.session.server.close().catch(() => undefined)));
  }

  /** Drops the session from the table and closes its server, which closes its transport and streams. */
  private end(id: string, why: string): void {
    const live = this.live.get(id);
    if (!live) return;
    if (live.idle !== undefined) clearTimeout(live.idle);
    this.live.delete(id);
    this.options.log.debug({ session: id, why, sessions: this.live.size }, "MCP session ended");
    void closeQuietly(live.session, this.options.log);
  }
}

async function closeQuietly(session: RegistryMcpServer, log: Logger): Promise<void> {
  try {
    await session.server.close();
  } catch (err) {
    log.warn({ err }, "closing an MCP session failed");
  }
}
