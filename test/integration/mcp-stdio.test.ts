/**
 * `agent-registry mcp` over stdio, driven by the MCP SDK's own Client against a real registry
 * (PROTOCOL.md section 13): the tools it lists, each tool's answer (checked by the client
 * against the listed output schema), errors as results with the error body, paging, tenant
 * scoping, tasks_delegate against NATS responders, the capability resource and its update
 * notification, and a stdout that carries nothing but protocol frames.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { headers as natsHeaders } from "@nats-io/nats-core";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { CLI_FROM_SOURCE, call, mcpOverStdio, type McpConnection } from "../harness/mcp.js";
import { ROOT } from "../harness/cli.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let registry: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
let prefix: string;
let mcp: McpConnection;
let lastRevision = 0;

const HOUR = 3_600_000;

async function register(s: Record<string, unknown>): Promise<void> {
  // A tenant's agent registers on its tenant's subject (v1.2).
  const by = typeof s["tenant_scope"] === "string" ? new RegistryClient(nc, { prefix, tenant: s["tenant_scope"] }) : client;
  const r = await by.register({ spec: s as AgentSpecInput, heartbeat_interval_ms: HOUR });
  lastRevision = Math.max(lastRevision, r.revision);
}

const summarizeSchema = { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"], additionalProperties: false };

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url);
  prefix = configOf(registry).prefix;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix });
  await register(
    spec("summarizer", {
      description: "summarizes long documents",
      capabilities: [
        { name: "text.summarize", description: "summarize a text into a few sentences", input_schema: summarizeSchema, output_schema: {}, tags: ["nlp"] },
      ],
    }),
  );
  await register(spec("failer", { capabilities: [{ name: "task.fail", description: "always fails", input_schema: {}, output_schema: {} }] }));
  await register(spec("sleeper", { capabilities: [{ name: "task.slow", description: "never answers", input_schema: {}, output_schema: {} }] }));
  await register(spec("ghost", { capabilities: [{ name: "task.ghost", description: "nobody listens", input_schema: {}, output_schema: {} }] }));
  for (let i = 0; i < 5; i++) await register(spec(`pager-${i}`));
  await register(spec("acme-only", { tenant_scope: "acme", capabilities: [{ name: "acme.secret", description: "acme's own", input_schema: {}, output_schema: {} }] }));

  // The agents behind the subjects: one answers, one fails as a NATS service does, one is silent.
  nc.subscribe("agent.tasks.summarizer", {
    callback: (_e, m) => {
      const { text } = m.json<{ text: string }>();
      m.respond(JSON.stringify({ summary: text.slice(0, 5), by: "summarizer" }));
    },
  });
  nc.subscribe("agent.tasks.failer", {
    callback: (_e, m) => {
      const h = natsHeaders();
      h.set("Nats-Service-Error-Code", "500");
      h.set("Nats-Service-Error", "model quota exhausted");
      m.respond("", { headers: h });
    },
  });
  nc.subscribe("agent.tasks.sleeper", { callback: () => undefined });
  await nc.flush();

  // The MCP front sends no min_revision: start it once the registry's view holds every agent above.
  await client.discover({}, { minRevision: lastRevision });
  mcp = await mcpOverStdio(["--nats", server.url, "--prefix", prefix, "--enable-delegate"]);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

describe("tools", () => {
  it("lists the tools of PROTOCOL.md section 13, each with input and output schemas and a description", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "agents_discover",
      "capabilities_list",
      "capability_lookup",
      "agent_get",
      "agent_card",
      "route",
      "search",
      "registry_health",
      "tasks_delegate",
    ]);
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
      expect(JSON.stringify(t.outputSchema), t.name).toContain("invalid_payload");
      expect(t.description!.length, t.name).toBeGreaterThan(80);
    }
    expect(tools.find((t) => t.name === "capability_lookup")?.inputSchema.required).toEqual(["capability"]);
  });

  it("agents_discover lists the fleet with live status, and filters by capability", async () => {
    const all = await call(mcp.client, "agents_discover");
    expect(all.isError).toBe(false);
    const ids = all.body.agents.map((a: { id: string }) => a.id);
    expect(ids).toEqual(expect.arrayContaining(["summarizer", "failer", "pager-0"]));
    expect(ids).not.toContain("acme-only");
    expect(all.body.agents.find((a: { id: string }) => a.id === "summarizer")).toMatchObject({ capabilities: ["text.summarize"], status: "ready" });
    const one = await call(mcp.client, "agents_discover", { capability: "text.summarize" });
    expect(one.body.agents.map((a: { id: string }) => a.id)).toEqual(["summarizer"]);
  });

  it("agents_discover pages with cursors until next_cursor is null", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await call(mcp.client, "agents_discover", { limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.isError).toBe(false);
      expect(page.body.agents.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.agents.map((a: { id: string }) => a.id));
      cursor = page.body.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(["pager-0", "pager-4", "summarizer"]));
  });

  it("capabilities_list pages the projection, and filters by keyword query and by kind", async () => {
    const first = await call(mcp.client, "capabilities_list", { limit: 2 });
    expect(first.isError).toBe(false);
    expect(first.body.capabilities).toHaveLength(2);
    expect(typeof first.body.next_cursor).toBe("string");
    const names: string[] = first.body.capabilities.map((c: { name: string }) => c.name);
    let cursor: string | null = first.body.next_cursor;
    while (cursor) {
      const page = await call(mcp.client, "capabilities_list", { limit: 2, cursor });
      names.push(...page.body.capabilities.map((c: { name: string }) => c.name));
      cursor = page.body.next_cursor;
    }
    expect(names).toEqual(expect.arrayContaining(["text.summarize", "task.fail", "pager-3.run"]));
    expect(names).not.toContain("acme.secret");

    const found = await call(mcp.client, "capabilities_list", { query: "summarize documents" });
    expect(found.body.capabilities[0]).toEqual({ name: "text.summarize", description: "summarize a text into a few sentences", providers: ["summarizer"], input_schema: summarizeSchema });

    const byKind = await call(mcp.client, "capabilities_list", { kind: "mcp_server" });
    expect(byKind.body).toEqual({ capabilities: [], next_cursor: null });
    const agents = await call(mcp.client, "capabilities_list", { kind: "agent", limit: 100 });
    expect(agents.body.capabilities.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(["text.summarize", "task.ghost"]));
  });

  it("capabilities_list refuses a cursor from another query", async () => {
    const page = await call(mcp.client, "capabilities_list", { kind: "agent", limit: 1 });
    const other = await call(mcp.client, "capabilities_list", { query: "summarize", cursor: page.body.next_cursor });
    expect(other.isError).toBe(true);
    expect(other.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "cursor" }] });
  });

  it("capability_lookup, agent_get, agent_card, route and search answer as the registry does", async () => {
    const lookup = await call(mcp.client, "capability_lookup", { capability: "text.summarize" });
    expect(lookup.body).toMatchObject({ capability: "text.summarize", providers: [{ agent_type: "summarizer", nats_subject: "agent.tasks.summarizer", input_schema: summarizeSchema }] });
    expect(lookup.body.revision).toBeGreaterThan(0);
    // The same answer but for the revision: the evictor's lease renewals move the bucket's
    // revision a few times a second, so the later direct lookup may carry a higher one.
    const { revision: mcpRevision, ...viaMcp } = lookup.body;
    const { revision: directRevision, ...direct } = await client.lookup({ capability: "text.summarize", limit: 50 });
    expect(viaMcp).toEqual(direct);
    expect(directRevision).toBeGreaterThanOrEqual(mcpRevision);

    const got = await call(mcp.client, "agent_get", { agent_type: "summarizer" });
    expect(got.body.agent).toMatchObject({ agent_type: "summarizer", status: "ready", instance_count: 1 });
    expect(got.body.agent.instances).toHaveLength(1);

    const card = await call(mcp.client, "agent_card", { agent_type: "summarizer" });
    expect(card.body.card).toMatchObject({ name: "summarizer", skills: [{ id: "text.summarize" }] });
    const old = await call(mcp.client, "agent_card", { agent_type: "summarizer", a2a_version: "0.3" });
    expect(old.body.card.protocolVersion).toMatch(/^0\.3/);

    const routed = await call(mcp.client, "route", { skill: "text.summarize" });
    expect(routed.body).toMatchObject({ agent_type: "summarizer", nats_subject: "agent.tasks.summarizer", score: 1 });

    const searched = await call(mcp.client, "search", { query: "summarize", limit: 5 });
    expect(searched.body.results[0]).toMatchObject({ agent_type: "summarizer", capability: "text.summarize" });
  });

  it("registry_health counts the agent types and the ready ones (the shared view: acme's agent is not in it)", async () => {
    const health = await call(mcp.client, "registry_health");
    expect(health.isError).toBe(false);
    expect(health.body).toMatchObject({ healthy: true, agents: 9, ready_agents: 9 });
    expect(health.body.revision).toBeGreaterThanOrEqual(lastRevision);
    expect(health.body.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("answers failures as isError results carrying the error body", async () => {
    const missing = await call(mcp.client, "agent_get", { agent_type: "nobody" });
    expect(missing.isError).toBe(true);
    expect(missing.body.error).toMatchObject({ code: "not_found" });
    expect(missing.body.error.message).toContain("nobody");

    const noRoute = await call(mcp.client, "route", { skill: "does.not.exist" });
    expect(noRoute.body.error.code).toBe("no_route");

    const badArgs = await call(mcp.client, "capability_lookup", { capability: 42, extra: true });
    expect(badArgs.isError).toBe(true);
    expect(badArgs.body.error.code).toBe("invalid_request");
    expect(badArgs.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(["", "capability"]);

    const badName = await call(mcp.client, "capability_lookup", { capability: "Not A Name" });
    expect(badName.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "capability" }] });

    const badRange = await call(mcp.client, "capability_lookup", { capability: "text.summarize", version: "not-a-range!!" });
    expect(badRange.body.error.code).toBe("invalid_request");
  });
});

describe("tasks_delegate", () => {
  it("sends the payload to the routed agent and returns its reply", async () => {
    const r = await call(mcp.client, "tasks_delegate", { capability: "text.summarize", payload: { text: "hello world" } });
    expect(r.isError).toBe(false);
    expect(r.body).toEqual({ agent_type: "summarizer", nats_subject: "agent.tasks.summarizer", reply: { summary: "hello", by: "summarizer" } });
  });

  it("refuses a payload that breaks the input schema with every issue's path, without calling the agent", async () => {
    let called = 0;
    const sub = nc.subscribe("agent.tasks.summarizer", {
      callback: () => {
        called++;
      },
    });
    try {
      const r = await call(mcp.client, "tasks_delegate", { capability: "text.summarize", payload: { txt: "hello" } });
      expect(r.isError).toBe(true);
      expect(r.body.error.code).toBe("invalid_payload");
      expect(r.body.error.issues).toEqual(
        expect.arrayContaining([
          { path: "payload.text", message: "must have required property 'text'" },
          { path: "payload.txt", message: "must NOT have additional properties" },
        ]),
      );
      expect(r.body.error.message).toContain("the agent was not called");
      // An A2A message is checked through its first data part.
      const a2a = await call(mcp.client, "tasks_delegate", { capability: "text.summarize", payload: { parts: [{ kind: "text", text: "x" }, { kind: "data", data: { text: "" } }] } });
      expect(a2a.body.error).toMatchObject({ code: "invalid_payload", issues: [{ path: "payload.parts.1.data.text" }] });
      await nc.flush();
      expect(called).toBe(0);
    } finally {
      sub.unsubscribe();
    }
  });

  it("says timeout when the agent does not answer in time", async () => {
    const r = await call(mcp.client, "tasks_delegate", { capability: "task.slow", payload: {}, timeout_ms: 300 });
    expect(r.body.error).toMatchObject({ code: "timeout" });
    expect(r.body.error.message).toContain("300 ms");
  });

  it("says agent_error when the agent answers with an error, or nobody listens on its subject", async () => {
    const failed = await call(mcp.client, "tasks_delegate", { capability: "task.fail", payload: {} });
    expect(failed.body.error).toEqual({ code: "agent_error", message: "failer answered with error 500: model quota exhausted" });
    const ghost = await call(mcp.client, "tasks_delegate", { capability: "task.ghost", payload: {} });
    expect(ghost.body.error.code).toBe("agent_error");
    expect(ghost.body.error.message).toContain("agent.tasks.ghost");
  });

  it("says no_route when nobody ready provides the capability", async () => {
    const r = await call(mcp.client, "tasks_delegate", { capability: "no.such.thing", payload: {} });
    expect(r.body.error.code).toBe("no_route");
  });
});

/** A resource's JSON text, parsed. */
async function readJson(uri: string): Promise<any> {
  const { contents } = await mcp.client.readResource({ uri });
  const first = contents[0];
  expect(first && "text" in first && first.mimeType).toBe("application/json");
  return JSON.parse(first && "text" in first ? first.text : "null");
}

describe("resources", () => {
  it("lists the capability projection and the agents' cards, and reads them", async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources[0]).toMatchObject({ uri: "registry://capabilities", mimeType: "application/json" });
    expect(resources.map((r) => r.uri)).toContain("registry://agents/summarizer/card");
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["registry://agents/{agent_type}/card"]);

    const body = await readJson("registry://capabilities");
    expect(body.capabilities.map((c: { name: string }) => c.name)).toContain("text.summarize");
    expect(await readJson("registry://agents/summarizer/card")).toMatchObject({ name: "summarizer" });
    await expect(mcp.client.readResource({ uri: "registry://agents/nobody/card" })).rejects.toThrow(/no resource/);
  });

  it("notifies a subscribed client when capabilities change, and the projection then shows the change", async () => {
    const updates: string[] = [];
    mcp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await mcp.client.subscribeResource({ uri: "registry://capabilities" });
    await register(spec("translator", { capabilities: [{ name: "text.translate", description: "translate", input_schema: {}, output_schema: {} }] }));
    await waitFor(() => updates.length > 0, { timeoutMs: 10_000, message: "a resources/updated notification" });
    expect(updates[0]).toBe("registry://capabilities");
    const projection = await readJson("registry://capabilities");
    expect(projection.capabilities.map((c: { name: string }) => c.name)).toContain("text.translate");
  });
});

describe("tenant scoping", () => {
  it("a server started with --tenant sees shared agents and the tenant's own; others do not", async () => {
    const acme = await mcpOverStdio(["--nats", server.url, "--prefix", prefix, "--tenant", "acme"]);
    try {
      const { tools } = await acme.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("tasks_delegate");
      const discovered = await call(acme.client, "agents_discover");
      expect(discovered.body.agents.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining(["acme-only", "summarizer"]));
      const lookup = await call(acme.client, "capability_lookup", { capability: "acme.secret" });
      expect(lookup.body.providers.map((p: { agent_type: string }) => p.agent_type)).toEqual(["acme-only"]);
      expect((await call(acme.client, "agent_get", { agent_type: "acme-only" })).isError).toBe(false);
    } finally {
      await acme.close();
    }
    const shared = await call(mcp.client, "capability_lookup", { capability: "acme.secret" });
    expect(shared.body.providers).toEqual([]);
    expect((await call(mcp.client, "agent_get", { agent_type: "acme-only" })).body.error.code).toBe("not_found");
  });
});

describe("stdout", () => {
  it("carries nothing but JSON-RPC frames, while the logs go to stderr", async () => {
    const child = spawn(process.execPath, [...CLI_FROM_SOURCE, "mcp", "--nats", server.url, "--prefix", prefix, "--log-level", "debug"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const send = (msg: object) => child.stdin.write(`${JSON.stringify(msg)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    await waitFor(() => out.includes('"id":1'), { timeoutMs: 20_000, message: `the initialize answer; stderr: ${err}` });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "agent_get", arguments: { agent_type: "nobody" } } });
    send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "registry_health", arguments: {} } });
    send({ jsonrpc: "2.0", id: 5, method: "resources/read", params: { uri: "registry://nothing" } });
    // Answers go out as they are ready, not in request order: wait for each (the CI once saw the
    // quick id 5 before 3 and 4, which need the registry, and closed stdin on them).
    await waitFor(() => [2, 3, 4, 5].every((id) => out.includes(`"id":${id}`)), { timeoutMs: 10_000, message: "every answer" });
    child.stdin.end();
    expect(await exited).toBe(0);

    const lines = out.split("\n").filter((l) => l !== "");
    expect(out.endsWith("\n")).toBe(true);
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    // Answers go out as they are ready, not in request order.
    const byId = new Map(lines.map((l) => [JSON.parse(l).id as number, JSON.parse(l)]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4, 5]);
    expect(byId.get(1).result.protocolVersion).toBe("2025-11-25");
    expect(byId.get(3).result.structuredContent.error.code).toBe("not_found");
    expect(byId.get(5).error.code).toBe(-32002);
    expect(err).toContain("MCP server on stdio");
    // The debug line of each call went to stderr too, never to stdout.
    const callLogs = err.split("\n").filter((l) => l.includes('"msg":"tool call"')).map((l) => JSON.parse(l));
    expect(callLogs).toEqual(expect.arrayContaining([expect.objectContaining({ tool: "agent_get", code: "not_found" }), expect.objectContaining({ tool: "registry_health" })]));
  });
});
