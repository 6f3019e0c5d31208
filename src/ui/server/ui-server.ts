/**
 * Everything under /ui on the ops server: the page (static files), its JSON API and its event
 * stream, behind the optional token. Read-only: GET and HEAD only.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { UiHandler } from "../../kit/ops-server.js";
import { RegistryClientError, RegistryTimeoutError, RegistryUnreachableError, InvalidRequestError } from "../../client/errors.js";
import { answerApi, BadRequest, type ApiSettings } from "./api.js";
import { GraphRequestError } from "./graph-api.js";
import { ApprovalsRequestError } from "./approvals-api.js";
import { offeredToken, tokenCheck, tokenCookie } from "./auth.js";
import type { EventFeed } from "./event-feed.js";
import { setPageHeaders, type StaticFiles } from "./static-files.js";

export type UiServerParts = { api: ApiSettings; feed: EventFeed; files: StaticFiles; token: string | undefined };

const FILE_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function createUiHandler({ api, feed, files, token }: UiServerParts): UiHandler {
  const allowed = tokenCheck(token);
  return async (req, res, path) => {
    setPageHeaders(res);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return sendJson(res, 405, { error: { code: "method_not_allowed", message: "the web page is read-only" } });
    }
    const query = new URL(req.url ?? "/", "http://ops").searchParams;
    if (token !== undefined) {
      const offered = offeredToken(req, query);
      if (!allowed(offered?.token)) return refuse(req, res, path, offered !== null);
      // Opened with ?token=: remembered as a cookie, and the token leaves the address bar.
      if (offered?.source === "query" && path === "/ui/") {
        res.setHeader("Set-Cookie", tokenCookie(offered.token));
        return redirect(res, "/ui/");
      }
    }
    if (path === "/ui") return redirect(res, "/ui/");
    if (path === "/ui/") return void (await files.serve(req, res, "index.html"));
    if (path === "/ui/events") {
      // HEAD probes the route: no consumer is opened for it.
      if (req.method === "HEAD") return void res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store" }).end();
      return feed.serve(req, res, query);
    }
    if (path.startsWith("/ui/api/")) return sendApi(res, api, path.slice("/ui/api/".length), query);
    const name = path.slice("/ui/".length);
    if (FILE_RE.test(name) && name !== "index.html" && (await files.serve(req, res, name))) return;
    return sendJson(res, 404, { error: { code: "not_found", message: `no route ${path}` } });
  };
}

async function sendApi(res: ServerResponse, api: ApiSettings, route: string, query: URLSearchParams): Promise<void> {
  try {
    const reply = await answerApi(api, route, query);
    return sendJson(res, reply.status, reply.body);
  } catch (e) {
    // The registry's refusals keep their status and code; the page shows the message.
    if (e instanceof BadRequest || e instanceof GraphRequestError || e instanceof ApprovalsRequestError || e instanceof InvalidRequestError) return sendJson(res, 400, { error: { code: "invalid_request", message: e.message } });
    if (e instanceof RegistryClientError) return sendJson(res, e.status, { error: { code: e.code, message: e.message } });
    if (e instanceof RegistryTimeoutError) return sendJson(res, 504, { error: { code: "timeout", message: e.message } });
    if (e instanceof RegistryUnreachableError) return sendJson(res, 503, { error: { code: "unavailable", message: e.message } });
    if (e instanceof URIError) return sendJson(res, 400, { error: { code: "invalid_request", message: "not valid percent-encoding" } });
    throw e;
  }
}

function refuse(req: IncomingMessage, res: ServerResponse, path: string, offered: boolean): void {
  const message = offered ? "the token is wrong" : "this page requires a token: open /ui/?token=<REGISTRY_UI_TOKEN>, or send Authorization: Bearer <token>";
  if (path === "/ui/" && (req.headers.accept ?? "").includes("text/html")) {
    // A browser then asks for it (the token as the password, any user name).
    res.setHeader("WWW-Authenticate", 'Basic realm="agent-registry ui", charset="UTF-8"');
    res.statusCode = 401;
    res.setHeader("Content-Type", "text/plain; charset=utf-8");
    res.setHeader("Cache-Control", "no-store");
    return void res.end(`401: ${message}\n`);
  }
  res.setHeader("WWW-Authenticate", 'Bearer realm="agent-registry ui"');
  return sendJson(res, 401, { error: { code: "unauthorized", message } });
}

function redirect(res: ServerResponse, to: string): void {
  res.statusCode = 303;
  res.setHeader("Location", to);
  res.setHeader("Cache-Control", "no-store");
  res.end();
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.setHeader("Cache-Control", "no-store");
  res.end(text);
}
