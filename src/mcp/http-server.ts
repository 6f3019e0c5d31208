/**
 * MCP over Streamable HTTP at `/mcp`. By default stateless: each POST gets a fresh server and
 * transport (the SDK's stateless mode, JSON responses rather than an event stream), so any
 * number of clients share nothing and a replica behind a load balancer needs no affinity; but
 * there is no stream to push notifications on, and HTTP clients re-read the resource. With
 * sessions on (http-sessions.ts) POST, GET (the notification stream) and DELETE go to the
 * client's session instead. Every request passes the guard (http-guard.ts) first.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { redactUrl } from "../kit/log-redaction.js";
import type { Logger } from "../kit/logger.js";
import { refusal, type HttpGuardOptions } from "./http-guard.js";
import { statelessExchange } from "./stateless-exchange.js";
import { rpcError as rpcErrorWithCode, type McpSessions } from "./http-sessions.js";

export const MCP_PATH = "/mcp";

export type McpHttpOptions = {
  host: string;
  port: number;
  guard: HttpGuardOptions;
  /** A server for one request (stateless). */
  newServer: () => Server;
  /** When given, requests go to the clients' sessions instead, and close() ends them all. */
  sessions?: McpSessions | undefined;
  log: Logger;
};

export type McpHttpEndpoint = { readonly url: string; readonly port: number; close(): Promise<void> };

function rpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  rpcErrorWithCode(res, status, -32000, message, headers);
}

async function handle(req: IncomingMessage, res: ServerResponse, options: McpHttpOptions): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (path !== MCP_PATH) return rpcError(res, 404, `not found: the MCP endpoint is POST ${MCP_PATH}`);
  const refused = refusal(req.headers, options.guard);
  if (refused) {
    options.log.warn({ status: refused.status, host: req.headers.host, origin: req.headers.origin, remote: req.socket.remoteAddress }, `refused: ${refused.message}`);
    return rpcError(res, refused.status, refused.message, refused.headers);
  }
  const sessions = options.sessions;
  if (sessions) {
    if (req.method !== "POST" && req.method !== "GET" && req.method !== "DELETE") {
      return rpcError(res, 405, `method ${req.method} not allowed`, { allow: "POST, GET, DELETE" });
    }
    if (req.method !== "POST") return sessions.handle(req, res, undefined);
    const body = await readJson(req, res);
    if (body === undefined) return;
    return sessions.handle(req, res, body.value);
  }
  // Stateless: no event stream to open (GET) and no session to end (DELETE).
  if (req.method !== "POST") return rpcError(res, 405, `method ${req.method} not allowed: this endpoint is stateless, POST only`, { allow: "POST" });
  const body = await readJson(req, res);
  if (body === undefined) return;
  await statelessExchange(options.newServer(), req, res, body.value);
}

/** Largest request body read, as the SDK's own default: a tool call's arguments, a delegated payload. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The body as JSON, read here rather than by the SDK (which reads it through a web stream:
 * more than half a millisecond a call); answered, and undefined, when too large or not JSON.
 */
function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ value: unknown } | undefined> {
  const tooLarge = () => {
    // The rest of the body is not read: the connection closes after this answer.
    rpcError(res, 413, `request body over ${MAX_BODY_BYTES} bytes`, { connection: "close" });
    req.pause();
  };
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
    tooLarge();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= MAX_BODY_BYTES) return;
      req.off("data", onData);
      tooLarge();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("error", reject);
    req.once("end", () => {
      if (size > MAX_BODY_BYTES) return;
      try {
        resolve({ value: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON" }, id: null }));
        resolve(undefined);
      }
    });
  });
}

export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttpEndpoint> {
  const http: HttpServer = createServer((req, res) => {
    handle(req, res, options).catch((err: unknown) => {
      options.log.error({ err, method: req.method, path: redactUrl(req.url ?? "/") }, "MCP HTTP request failed");
      if (!res.headersSent) rpcError(res, 500, "internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const shownHost = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    port,
    close: async () => {
      await options.sessions?.closeAll();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
