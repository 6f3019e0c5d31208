/**
 * The ops HTTP server: /metrics for Prometheus, /healthz for liveness and /readyz for
 * readiness probes, and each shared agent's exports (PROTOCOL.md section 10.3):
 * /agents/<agent_type>/agent-card.json (A2A v1.0) and /agents/<agent_type>/toolspec.json;
 * and, when a handler is given, the operator's web page under /ui/ (src/ui/server/).
 * node:http is enough for a few read-only routes; building binds nothing, listen() does, so
 * tests can bind port 0 and the composition root decides when to expose it.
 *
 * Every request must name an allowed host in `Host` (src/kit/hosts.ts): loopback names, the
 * bound address (for a wildcard bind, the machine's interface addresses, which kubelet probes
 * and Prometheus use to reach a pod) and the configured names. Others get 421 before any
 * route runs, so a page served from a rebinding name cannot read /ui or /metrics through a
 * browser on this machine or network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { isRegistryError } from "../domain/errors.js";
import { allowedHostsFor, hostAllowed, interfaceAddresses } from "./hosts.js";
import { redactUrl } from "./log-redaction.js";
import { listenBounded } from "./http-listen.js";

export interface HealthCheck {
  ok: boolean;
  detail?: string;
}

export interface HealthReport {
  /** False only when the process cannot recover by itself and should be restarted. */
  live: boolean;
  /** True when this replica may take traffic (NATS up, view caught up, endpoints started). */
  ready: boolean;
  checks: Record<string, HealthCheck>;
}

/** The subset of a pino logger the server uses. */
export interface OpsLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface OpsServerOptions {
  host: string;
  port: number;
  registry: Registry;
  health: () => HealthReport;
  logger?: OpsLogger;
  /** Host names a request may name besides loopback and the bound address(es) (REGISTRY_HTTP_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** The setting that adds one, named in the refusal. */
  allowedHostsSetting?: string;
}

/**
 * The exports the ops server serves, answered by the same queries as over NATS (for shared
 * agents: a tenant's agents are exported over NATS only, where the subject names the tenant).
 * A RegistryError-like `{ code, message }` thrown is answered with its HTTP-like status.
 */
export interface AgentDocuments {
  card(agentType: string): Promise<object>;
  toolspec(agentType: string): Promise<object>;
  /** The public key exported cards are signed with, as a JWK Set; undefined when cards go unsigned. */
  jwks?(): object | undefined;
}

/** Where the card signing key's public half is published (RFC 8615's well-known prefix). */
const JWKS_PATH = "/.well-known/jwks.json";

/**
 * Answers every request under /ui (the operator's page, its API and its event feed). It owns
 * the whole response, a long-lived one included (server-sent events).
 */
export type UiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

export interface OpsServer {
  /** Serves the agents' exports from now on (they exist once the queries do). */
  serveAgentDocuments(documents: AgentDocuments): void;
  /** Serves /ui and everything under it from now on. */
  serveUi(handler: UiHandler): void;
  /** Binds and resolves with the bound port (the chosen one when port is 0). */
  listen(): Promise<number>;
  /** Stops accepting, ends open connections, resolves when the socket is closed. */
  close(): Promise<void>;
  readonly port: number | undefined;
}

const JSON_TYPE = "application/json; charset=utf-8";
const ALLOWED_METHODS = "GET, HEAD";

export function createOpsServer(options: OpsServerOptions): OpsServer {
  const { registry, health, logger } = options;
  let server: Server | undefined;
  let boundPort: number | undefined;
  let documents: AgentDocuments | undefined;
  let ui: UiHandler | undefined;
  const allowedHosts = allowedHostsFor(options.host, options.allowedHosts ?? [], interfaceAddresses());
  const setting = options.allowedHostsSetting ?? "REGISTRY_HTTP_ALLOWED_HOSTS";

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostAllowed(req.headers.host, allowedHosts)) {
      // 421: this server does not answer for that authority. The list is not echoed: it holds the machine's addresses.
      const host = JSON.stringify((req.headers.host ?? "").slice(0, 256));
      return sendJson(res, 421, { error: { code: "misdirected_request", message: `Host ${host} is not a name this server answers to; ${setting} adds one (docs/security.md, "The ops port")` } });
    }
    // Only the path matters; a query string (cache busters, probes' extras) is ignored.
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    if (ui && (path === "/ui" || path.startsWith("/ui/"))) return ui(req, res, path);
    const document = AGENT_DOCUMENT_RE.exec(path);
    const known = path === "/metrics" || path === "/healthz" || path === "/readyz" || path === JWKS_PATH || document !== null;
    if (!known) return sendJson(res, 404, { error: { code: "not_found", message: `no route ${path}` } });
    // HEAD is GET without a body (RFC 9110); some load balancers probe with it.
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", ALLOWED_METHODS);
      return sendJson(res, 405, { error: { code: "method_not_allowed", message: `${req.method} not allowed on ${path}` } });
    }
    if (document !== null) return serveDocument(res, documents, document[1]!, document[2] === "agent-card.json" ? "card" : "toolspec");
    if (path === JWKS_PATH) {
      const jwks = documents?.jwks?.();
      if (jwks === undefined) return sendJson(res, 404, { error: { code: "not_found", message: "exported cards are not signed here (REGISTRY_CARD_SIGNING_KEY is not set)" } });
      return sendJson(res, 200, jwks);
    }
    if (path === "/metrics") {
      const text = await registry.metrics();
      return send(res, 200, registry.contentType, text);
    }
    return sendHealth(res, path, health());
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    // Every failure ends as a 500 here: a probe must get an answer, never a hung socket.
    route(req, res).catch((err: unknown) => {
      // The query string may carry a credential (the web page's ?token=): never logged as sent.
      logger?.error({ err, path: redactUrl(req.url ?? "/") }, "ops request failed");
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendJson(res, 500, { error: { code: "internal", message: "ops request failed" } });
    });
  }

  return {
    get port() {
      return boundPort;
    },

    serveAgentDocuments(d) {
      documents = d;
    },

    serveUi(handler) {
      ui = handler;
    },

    async listen() {
      if (server) return boundPort ?? 0;
      const s = createServer(handle);
      server = s;
      try {
        boundPort = await listenBounded(s, options.host, options.port, (err) => logger?.error({ err }, "ops server error"));
      } catch (err) {
        server = undefined;
        throw err;
      }
      logger?.info({ host: options.host, port: boundPort, allowed_hosts: allowedHosts }, "ops server listening");
      return boundPort;
    },

    close() {
      const s = server;
      server = undefined;
      boundPort = undefined;
      if (!s) return Promise.resolve();
      return new Promise<void>((resolve) => {
        s.close(() => resolve());
        // Keep-alive sockets (Prometheus, fetch) would hold close() open until they time out.
        s.closeAllConnections();
      });
    },
  };
}

/** `/agents/<agent_type>/agent-card.json` or `/agents/<agent_type>/toolspec.json`. */
const AGENT_DOCUMENT_RE = /^\/agents\/([^/]+)\/(agent-card\.json|toolspec\.json)$/;

/** The HTTP status of an error reply of the registry (a 4xx or 503 is the caller's to know), else undefined. */
function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", Buffer.byteLength(body));
  // Health and metrics are live values; a cached answer would mislead a probe.
  res.setHeader("Cache-Control", "no-store");
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON_TYPE, JSON.stringify(body));
}

/** `/healthz` (alive) or `/readyz` (ready, with the checks that fail named), 503 when not. */
function sendHealth(res: ServerResponse, path: string, report: HealthReport): void {
  if (path === "/healthz") return sendJson(res, report.live ? 200 : 503, { status: report.live ? "ok" : "fail", checks: report.checks });
  const failing = Object.entries(report.checks)
    .filter(([, c]) => !c.ok)
    .map(([name]) => name);
  sendJson(res, report.ready ? 200 : 503, { status: report.ready ? "ready" : "not_ready", failing, checks: report.checks });
}

/** An agent's exported A2A card or MCP tool list, or the registry's own refusal with its status. */
async function serveDocument(res: ServerResponse, documents: AgentDocuments | undefined, rawType: string, which: "card" | "toolspec"): Promise<void> {
  if (!documents) return sendJson(res, 503, { error: { code: "unavailable", message: "the registry is starting" } });
  let agentType: string;
  try {
    agentType = decodeURIComponent(rawType);
  } catch {
    return sendJson(res, 400, { error: { code: "invalid_request", message: "the agent type in the path is not valid percent-encoding" } });
  }
  try {
    return sendJson(res, 200, which === "card" ? await documents.card(agentType) : await documents.toolspec(agentType));
  } catch (e) {
    // The registry's own refusals (not_found, unavailable while loading...) keep their status.
    if (!isRegistryError(e)) throw e;
    return sendJson(res, e.status, { error: { code: e.code, message: e.message } });
  }
}
