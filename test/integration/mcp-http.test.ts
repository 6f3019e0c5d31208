/**
 * `agent-registry mcp --http-port` (Streamable HTTP at POST /mcp, stateless) driven by the MCP
 * SDK's own Client against a real registry: tools and errors as over stdio, tasks_delegate
 * against a NATS responder, and the guard: a Host or Origin of another site is refused (DNS
 * rebinding), and with a token every request needs it as a bearer token.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { call, mcpOverHttp, startMcpHttpProcess, type McpHttpProcess } from "../harness/mcp.js";

let server: NatsTestServer;
let registry: TestRegistry;
let nc: NatsConnection;
let prefix: string;
let open: McpHttpProcess;
let guarded: McpHttpProcess;

const TOKEN = "t0ken-for-tests";
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };

/** A raw POST with the headers given (node:http, so Host can be set). */
function post(port: number, headers: Record<string, string>, body: object = INIT): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let data = "";
        res.on("data", (c: Buffer) => (data += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data === "" ? null : JSON.parse(data) }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url);
  prefix = configOf(registry).prefix;
  nc = await connect({ servers: server.url });
  const client = new RegistryClient(nc, { prefix });
  const echo = spec("echo", {
    capabilities: [{ name: "text.echo", description: "echoes a text", input_schema: { type: "object", required: ["text"] }, output_schema: {} }],
  });
  const { revision } = await client.register({ spec: echo as AgentSpecInput, heartbeat_interval_ms: 3_600_000 });
  // The MCP front sends no min_revision: its servers start once the registry's view holds echo.
  await client.get("echo", { minRevision: revision });
  nc.subscribe("agent.tasks.echo", {
    callback: (_e, m) => {
      m.respond(`echo: ${m.json<{ text: string }>().text}`);
    },
  });
  await nc.flush();
  const common = ["--nats", server.url, "--prefix", prefix];
  [open, guarded] = await Promise.all([
    startMcpHttpProcess([...common, "--enable-delegate"]),
    startMcpHttpProcess([...common, "--allowed-origin", "https://console.example.com"], { REGISTRY_MCP_TOKEN: TOKEN }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([open?.stop(), guarded?.stop()]);
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

describe("Streamable HTTP", () => {
  it("binds to loopback by default and serves the tools to the SDK's client", async () => {
    expect(open.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const mcp = await mcpOverHttp(open.url);
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name)).toContain("tasks_delegate");
      const lookup = await call(mcp.client, "capability_lookup", { capability: "text.echo" });
      expect(lookup.body.providers.map((p: { agent_type: string }) => p.agent_type)).toEqual(["echo"]);
      const health = await call(mcp.client, "registry_health");
      expect(health.body).toMatchObject({ healthy: true, agents: 1, ready_agents: 1 });
      const missing = await call(mcp.client, "agent_card", { agent_type: "nobody" });
      expect(missing).toMatchObject({ isError: true, body: { error: { code: "not_found" } } });
      const { resources } = await mcp.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["registry://capabilities", "registry://agents/echo/card"]);
    } finally {
      await mcp.close();
    }
  });

  it("delegates a task and returns a reply that is not JSON as a string", async () => {
    const mcp = await mcpOverHttp(open.url);
    try {
      const ok = await call(mcp.client, "tasks_delegate", { capability: "text.echo", payload: { text: "hi" } });
      expect(ok.body).toEqual({ agent_type: "echo", nats_subject: "agent.tasks.echo", reply: "echo: hi" });
      const bad = await call(mcp.client, "tasks_delegate", { capability: "text.echo", payload: {} });
      expect(bad.body.error).toMatchObject({ code: "invalid_payload", issues: [{ path: "payload.text" }] });
      // As the MCP Inspector sends an object typed into its form: as JSON text.
      const asText = await call(mcp.client, "tasks_delegate", { capability: "text.echo", payload: '{"text": "typed"}' });
      expect(asText.body).toEqual({ agent_type: "echo", nats_subject: "agent.tasks.echo", reply: "echo: typed" });
      const notJson = await call(mcp.client, "tasks_delegate", { capability: "text.echo", payload: "{not json" });
      expect(notJson.body.error).toMatchObject({ code: "invalid_payload" });
      // The schema says what payload is, so a client that builds a form knows what to send.
      const { tools } = await mcp.client.listTools();
      const payload = (tools.find((t) => t.name === "tasks_delegate")?.inputSchema.properties as Record<string, any>)["payload"];
      expect(JSON.stringify(payload)).toMatch(/"type":"object"/);
    } finally {
      await mcp.close();
    }
  });

  it("does not offer resource subscriptions: a stateless endpoint has no stream to send them on", async () => {
    const mcp = await mcpOverHttp(open.url);
    try {
      expect(mcp.client.getServerCapabilities()?.resources?.subscribe).toBe(false);
    } finally {
      await mcp.close();
    }
  });
});

describe("the guard", () => {
  it("refuses a Host header naming another site (DNS rebinding) and a foreign Origin", async () => {
    const rebound = await post(open.port, { host: `evil.example:${open.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.error.message).toContain("evil.example");
    const foreign = await post(open.port, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain("Origin");
    const local = await post(open.port, { origin: `http://localhost:${open.port}`, host: `localhost:${open.port}` });
    expect(local.status).toBe(200);
    expect(local.body.result.serverInfo.name).toBe("agent-registry");
    expect(open.stderr()).toContain("refused");
  });

  it("with an origin list, allows only those origins", async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await post(guarded.port, { ...auth, origin: "https://console.example.com" })).status).toBe(200);
    expect((await post(guarded.port, { ...auth, origin: `http://localhost:${guarded.port}` })).status).toBe(403);
  });

  it("with a token, refuses requests without it or with another, and serves the SDK's client that sends it", async () => {
    const none = await post(guarded.port, {});
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe('Bearer realm="agent-registry"');
    const wrong = await post(guarded.port, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.message).toBe("the bearer token is not valid");
    await expect(mcpOverHttp(guarded.url)).rejects.toThrow();

    const mcp = await mcpOverHttp(guarded.url, { authorization: `Bearer ${TOKEN}` });
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("tasks_delegate");
      expect((await call(mcp.client, "agents_discover")).body.agents.map((a: { id: string }) => a.id)).toEqual(["echo"]);
    } finally {
      await mcp.close();
    }
    expect(guarded.stderr()).not.toContain(TOKEN);
  });

  it("answers a request naming 1.5 MB of tool or resource with an error of its own size, not one repeating it", async () => {
    const port = Number(new URL(open.url).port);
    const big = "x".repeat(1_500_000);
    const tool = await post(port, { host: "127.0.0.1" }, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: big, arguments: {} } });
    expect(tool.body.error.message).toMatch(/^MCP error -32602: unknown tool "x{128}"\.\.\. \(1499872 more characters\); tools\/list names them$/);
    const resource = await post(port, { host: "127.0.0.1" }, { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: `registry://agents/${big}/card` } });
    expect(resource.body.error.message).toMatch(/^MCP error -32002: no resource "registry:\/\/agents\/x+"\.\.\. \(\d+ more characters\)/);
    for (const r of [tool, resource]) expect(JSON.stringify(r.body).length).toBeLessThan(2048);
  });

  it("answers 405 to GET (stateless: no event stream), 404 off /mcp, 413 to a body over 4 MiB, and a parse error to one that is not JSON", async () => {
    const res = await fetch(open.url, { method: "GET", headers: { accept: "text/event-stream" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    const off = await fetch(open.url.replace("/mcp", "/other"), { method: "POST" });
    expect(off.status).toBe(404);
    const huge = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "search", arguments: { query: "x".repeat(4 * 1024 * 1024) } } };
    // The 413 may race the client's own write of the 4 MiB (EPIPE/ECONNRESET on Node 24): a
    // closed socket before the body was read whole is the same refusal.
    const tooLarge = await post(open.port, {}, huge).catch((e: NodeJS.ErrnoException) => {
      if (e.code === "EPIPE" || e.code === "ECONNRESET") return "closed" as const;
      throw e;
    });
    if (tooLarge !== "closed") {
      expect(tooLarge.status).toBe(413);
      expect(tooLarge.body.error.message).toContain("request body over");
    }
    // Without a Content-Length (chunked), the bound is counted while reading.
    // The server answers 413 and closes while the client is still writing: depending on the
    // Node version and timing the client sees the 413 or only the closed socket (EPIPE or
    // ECONNRESET, seen on Node 24). Either way the body was refused before it was read whole.
    const chunked = await new Promise<number | "closed">((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: open.port, path: "/mcp", method: "POST", headers: { "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", (e: NodeJS.ErrnoException) => (e.code === "EPIPE" || e.code === "ECONNRESET" ? resolve("closed") : reject(e)));
      const chunk = "x".repeat(1024 * 1024);
      for (let i = 0; i < 5; i++) req.write(chunk);
      req.end();
    });
    expect([413, "closed"]).toContain(chunked);
    const notJson = await fetch(open.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});
