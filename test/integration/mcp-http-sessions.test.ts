/**
 * `agent-registry mcp --http-port --http-sessions`: stateful Streamable HTTP sessions, driven
 * by the MCP SDK's own Client and StreamableHTTPClientTransport against a real registry.
 * Subscribed sessions hear `notifications/resources/updated` on their GET stream when a
 * registration changes the capabilities; the session limit refuses an `initialize` with 503;
 * an idle session is closed; an unknown session id is 404; DELETE ends a session; closing the
 * endpoint ends them all; the guard covers GET and DELETE as it covers POST.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { captureLogs, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { startHttpFront, toolContext } from "../../src/mcp/run.js";
import { call, startMcpHttpProcess, type McpHttpProcess } from "../harness/mcp.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let registry: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
/** Sessions on, at most 2, idle after the default 30 minutes, with a token. */
let sessions: McpHttpProcess;
/** Sessions on, closed after 1 s idle (long enough for a client to open its GET stream), debug logs (the session's end is logged). */
let shortIdle: McpHttpProcess;

const TOKEN = "t0ken-for-sessions";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const PROTOCOL_VERSION = "2025-11-25";
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "raw", version: "1" } } };
const JSON_AND_SSE = { "content-type": "application/json", accept: "application/json, text/event-stream" };

type Session = { client: Client; transport: StreamableHTTPClientTransport; updates: string[] };

async function openSession(url: string, headers: Record<string, string> = AUTH): Promise<Session> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const mcp = new Client({ name: "mcp-session-test", version: "1.0.0" });
  const updates: string[] = [];
  mcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  await mcp.connect(transport);
  return { client: mcp, transport, updates };
}

/** Ends the session with DELETE, then closes the client. */
async function endSession(s: Session): Promise<void> {
  await s.transport.terminateSession();
  await s.client.close();
}

/** A raw POST of one JSON-RPC message. */
function post(url: string, body: object, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { ...JSON_AND_SSE, ...AUTH, ...headers }, body: JSON.stringify(body) });
}

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url);
  const prefix = configOf(registry).prefix;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix });
  const common = ["--nats", server.url, "--prefix", prefix, "--http-sessions"];
  [sessions, shortIdle] = await Promise.all([
    startMcpHttpProcess([...common, "--max-sessions", "2"], { REGISTRY_MCP_TOKEN: TOKEN }),
    startMcpHttpProcess([...common, "--log-level", "debug"], { REGISTRY_MCP_SESSION_IDLE_MS: "1000" }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([sessions?.stop(), shortIdle?.stop()]);
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

describe("HTTP sessions", () => {
  it("offer subscriptions, and every subscribed session hears of a registration on its GET stream", async () => {
    const [a, b] = await Promise.all([openSession(sessions.url), openSession(sessions.url)]);
    try {
      expect(a.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
      expect(a.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
      await Promise.all([a.client.subscribeResource({ uri: "registry://capabilities" }), b.client.subscribeResource({ uri: "registry://capabilities" })]);
      await client.register({
        spec: spec("translator", { capabilities: [{ name: "text.translate", description: "translate", input_schema: {}, output_schema: {} }] }) as AgentSpecInput,
        heartbeat_interval_ms: 3_600_000,
      });
      await waitFor(() => a.updates.length > 0 && b.updates.length > 0, { timeoutMs: 10_000, message: "a resources/updated notification in both sessions" });
      expect(a.updates[0]).toBe("registry://capabilities");
      expect(b.updates[0]).toBe("registry://capabilities");
      const read = await a.client.readResource({ uri: "registry://capabilities" });
      const projection = JSON.parse((read.contents[0] as { text: string }).text) as { capabilities: Array<{ name: string }> };
      expect(projection.capabilities.map((c) => c.name)).toContain("text.translate");
      // The tools answer in a session as they do stateless.
      const lookup = await call(b.client, "capability_lookup", { capability: "text.translate" });
      expect(lookup.body.providers.map((p: { agent_type: string }) => p.agent_type)).toEqual(["translator"]);
    } finally {
      await Promise.all([endSession(a), endSession(b)]);
    }
  });

  it("refuses an initialize beyond the session limit with 503, and takes one again once a session ended", async () => {
    const [a, b] = await Promise.all([openSession(sessions.url), openSession(sessions.url)]);
    let c: Session | undefined;
    try {
      const refused = await post(sessions.url, INIT);
      expect(refused.status).toBe(503);
      const body = (await refused.json()) as { error: { code: number; message: string } };
      expect(body.error.message).toContain("too many MCP sessions (limit 2)");
      await expect(openSession(sessions.url)).rejects.toThrow();
      expect(sessions.stderr()).toContain("refused new MCP sessions: at the session limit");
      await endSession(a);
      c = await openSession(sessions.url);
      expect((await c.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([endSession(b), c ? endSession(c) : undefined]);
    }
  });

  it("answers 404 to an unknown session id, 400 to a request without one that is not initialize, and DELETE ends a session", async () => {
    const unknown = await post(sessions.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": "no-such-session" });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: number } }).error.code).toBe(-32001);
    const noId = await post(sessions.url, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(noId.status).toBe(400);
    expect(((await noId.json()) as { error: { message: string } }).error.message).toContain("Mcp-Session-Id");

    const s = await openSession(sessions.url);
    const id = s.transport.sessionId ?? "";
    await s.transport.terminateSession();
    await s.client.close();
    const after = await post(sessions.url, { jsonrpc: "2.0", id: 3, method: "tools/list" }, { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL_VERSION });
    expect(after.status).toBe(404);
    const deleteAgain = await fetch(sessions.url, { method: "DELETE", headers: { ...AUTH, "mcp-session-id": id } });
    expect(deleteAgain.status).toBe(404);
  });

  it("closes a session that stays idle, and its id is then unknown", async () => {
    const init = await post(shortIdle.url, INIT);
    expect(init.status).toBe(200);
    const id = init.headers.get("mcp-session-id") ?? "";
    expect(id).not.toBe("");
    // Watched in the log, not by asking: a request would keep the session busy.
    await waitFor(() => shortIdle.stderr().includes(`"session":"${id}","why":"idle"`), { timeoutMs: 10_000, message: `session ${id} closed as idle` });
    const after = await post(shortIdle.url, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL_VERSION });
    expect(after.status).toBe(404);
  });

  it("keeps a session with an open GET stream alive past the idle timeout", async () => {
    const s = await openSession(shortIdle.url, {});
    try {
      const id = s.transport.sessionId ?? "";
      // Another session started later goes idle and is closed while this one listens.
      const other = (await post(shortIdle.url, INIT)).headers.get("mcp-session-id") ?? "";
      await waitFor(() => shortIdle.stderr().includes(`"session":"${other}","why":"idle"`), { timeoutMs: 10_000, message: `session ${other} closed as idle` });
      expect(shortIdle.stderr()).not.toContain(`"session":"${id}","why"`);
      expect((await s.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await endSession(s);
    }
  });
});

describe("closing the endpoint", () => {
  it("ends every session and refuses requests after", async () => {
    const { logger, lines } = captureLogs();
    const settings = { httpPort: 0, httpHost: "127.0.0.1", delegate: false, httpSessions: true, maxSessions: 10, sessionIdleMs: 1_800_000 };
    const endpoint = await startHttpFront(settings, toolContext(client, nc, { delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 1000 }, logger), logger);
    const [a, b] = await Promise.all([openSession(endpoint.url, {}), openSession(endpoint.url, {})]);
    try {
      await endpoint.close();
      const ended = lines.filter((l) => l.msg === "MCP session ended" && l["why"] === "endpoint closing").map((l) => l["session"]);
      expect(ended.sort()).toEqual([a.transport.sessionId, b.transport.sessionId].sort());
      expect(lines.filter((l) => l.msg === "MCP session ended").at(-1)?.["sessions"]).toBe(0);
      await expect(a.client.listTools()).rejects.toThrow();
    } finally {
      await Promise.all([a.client.close(), b.client.close()]);
    }
  });
});

describe("the session limit under concurrent initialize requests", () => {
  it("starts exactly as many sessions as the limit allows", async () => {
    const { logger } = captureLogs("warn");
    const settings = { httpPort: 0, httpHost: "127.0.0.1", delegate: false, httpSessions: true, maxSessions: 2, sessionIdleMs: 1_800_000 };
    const endpoint = await startHttpFront(settings, toolContext(client, nc, { delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 1000 }, logger), logger);
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(endpoint.url, INIT, { authorization: "" })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 503, 503, 503, 503]);
      const ids = answers.map((a) => a.headers.get("mcp-session-id")).filter((id) => id !== null);
      expect(new Set(ids).size).toBe(2);
    } finally {
      await endpoint.close();
    }
  });
});

describe("the guard on sessions", () => {
  it("refuses a GET or DELETE with a foreign Host or Origin, or without the token", async () => {
    const s = await openSession(sessions.url);
    try {
      const id = s.transport.sessionId ?? "";
      const get = (headers: Record<string, string>) => fetch(sessions.url, { method: "GET", headers: { accept: "text/event-stream", "mcp-session-id": id, ...headers } });
      expect((await get({})).status).toBe(401);
      expect((await get({ authorization: "Bearer nope" })).status).toBe(401);
      expect((await get({ ...AUTH, origin: "https://evil.example" })).status).toBe(403);
      const del = (headers: Record<string, string>) => fetch(sessions.url, { method: "DELETE", headers: { "mcp-session-id": id, ...headers } });
      expect((await del({})).status).toBe(401);
      expect((await del({ ...AUTH, origin: "https://evil.example" })).status).toBe(403);
      // The session survived every refused request.
      expect((await s.client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await endSession(s);
    }
    expect(sessions.stderr()).not.toContain(TOKEN);
  });

  it("refuses a GET whose Host names another site (DNS rebinding)", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: sessions.port, path: "/mcp", method: "GET", headers: { host: `evil.example:${sessions.port}`, accept: "text/event-stream", ...AUTH } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
