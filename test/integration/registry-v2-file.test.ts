/**
 * A registry started with a Registry v2 file (PROTOCOL.md section 11.3): its servers' tools,
 * compositions, agents' cards, schemas and dependency graph served through NATS; a broken v2
 * file refuses the start naming every problem; a hot reload to a broken file keeps the last
 * good one.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const FIXTURE = "test/fixtures/registry-v2/fleet-v2.json";
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "registry-v2-"));
  file = join(dir, "fleet-v2.json");
  copyFileSync(FIXTURE, file);
  server = await withNatsServer();
  reg = await startRegistry(server.url, { registryFile: file });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a registry started with a v2 file", () => {
  it("logs the file's warnings", () => {
    const line = reg.logs.find((l) => l.msg === "registry file warnings");
    expect(line?.["warnings"]).toHaveLength(5);
    expect(String((line?.["warnings"] as string[])[0])).toContain("dangling_provides");
  });

  it("serves a server's passthrough tools through lookup, refs resolved", async () => {
    const r = await c.request("lookup", { capability: "add_note" });
    expect(r.body.providers.map((p: { agent_type: string; kind: string }) => `${p.agent_type}:${p.kind}`)).toEqual(["notes-service:mcp_server"]);
    const got = await c.request("get", { agent_type: "notes-service" });
    expect(got.body.agent).toMatchObject({ status: "ready", version: "1.2.0", kind: "mcp_server", nats_subject: "mcp.tools.notes-service" });
    expect(got.body.agent.capabilities.map((x: { name: string }) => x.name)).toEqual(["find_notes", "add_note", "read_note", "list_notes"]);
    // `get` keeps the stored refs; `toolspec` returns them inlined.
    expect(got.body.agent.capabilities[1].input_schema).toEqual({ $ref: "#NewNoteRequest:1.0.0" });
    const tools = await c.request("toolspec", { agent_type: "notes-service" });
    const addNote = tools.body.tools.find((t: { name: string }) => t.name === "add_note");
    expect(addNote.inputSchema.required).toEqual(["title"]);
  });

  it("serves a composition as a tool entry with its spec", async () => {
    const got = await c.request("get", { agent_type: "book_trip" });
    const original = (JSON.parse(readFileSync(FIXTURE, "utf8")) as { tools: Array<Record<string, unknown>> }).tools.find((t) => t["name"] === "book_trip")!;
    expect(got.body.agent).toMatchObject({ kind: "tool", status: "ready" });
    expect(got.body.agent.capabilities[0].mcp_extra.spec).toEqual(original["spec"]);
    expect(got.body.agent.depends).toHaveLength(6);
  });

  it("serves the agents' cards and the schemas", async () => {
    const card = await c.request("card", { agent_type: "study-agent" });
    expect(card.ok).toBe(true);
    expect(JSON.stringify(card.body)).toContain("study_subject");
    const schema = await c.request("schema", { name: "TripQuery", version: "1.0.0" });
    expect(schema.body).toMatchObject({ name: "TripQuery", version: "1.0.0", description: "Where and when a traveller wants to go" });
    const list = await c.request("schemas", {});
    expect(list.body.schemas).toHaveLength(12);
  });

  it("answers the graph of an agent through the file's tools and servers", async () => {
    const g = await c.request("graph", { agent_type: "booking-agent" });
    const ids = g.body.nodes.map((n: { id: string }) => n.id);
    expect(ids).toEqual(expect.arrayContaining(["agent:booking-agent@1.1.0", "tool:book_trip@1.0.0", "tool:seat_hold@1.0.0", "mcp_server:seat-service@1.0.0"]));
    expect(g.body.nodes.every((n: { state: string }) => n.state === "live")).toBe(true);
    // The file's warnings about entries of this graph: the saga's three servers' dangling provides.
    expect(g.body.problems.map((p: { severity: string; code: string; path: string }) => `${p.severity} ${p.code} ${p.path}`)).toEqual([
      "warning dangling_provides servers[7].provides[2]",
      "warning dangling_provides servers[8].provides[2]",
      "warning dangling_provides servers[9].provides[2]",
    ]);
    expect(g.body.problems[0].message).toBe('registry file: server seat-service provides "seat_check", but no tool of the file has it as source');
    // The whole fleet's graph carries all of them; an agent whose graph has none of those entries, none.
    expect((await c.request("graph", {})).body.problems.filter((p: { code: string }) => p.code === "dangling_provides")).toHaveLength(5);
    expect((await c.request("graph", { agent_type: "digest-agent" })).body.problems).toEqual([]);
  });

  it("keeps the last good file on a broken reload, logging every problem", async () => {
    const doc = JSON.parse(readFileSync(file, "utf8")) as { tools: Array<Record<string, any>> };
    doc.tools[0]!["source"].server = "nowhere";
    doc.tools[1]!["inputSchema"] = { $ref: "#Missing:1.0.0" };
    const before = (await reg.metrics.registryFileErrors.get()).values[0]?.value ?? 0;
    writeFileSync(file, JSON.stringify(doc));
    await waitFor(async () => ((await reg.metrics.registryFileErrors.get()).values[0]?.value ?? 0) > before, { timeoutMs: 8000, message: "broken file counted" });
    const line = reg.logs.findLast((l) => l.msg === "registry file not applied; keeping the last good state");
    const message = String((line?.["err"] as { message?: string } | undefined)?.message);
    expect(message).toContain("tools[0].source.server: missing_server");
    expect(message).toContain("tools[1].inputSchema: unresolved_ref");
    expect(reg.view.get("notes-service")?.spec.capabilities.map((x) => x.name)).toContain("find_notes");
    expect(reg.view.get("notes-service")?.status).toBe("ready");
  });
});

it("refuses to start with a broken v2 file, naming every problem", async () => {
  const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { tools: Array<Record<string, any>>; agents: Array<Record<string, any>> };
  doc.tools[8]!["source"].server = "sundial";
  doc.agents[1]!["capabilities"].extensions[0].params.depends.push({ type: "agent", name: "coordinator-agent", version: "1.0.0" });
  const bad = join(dir, "bad-v2.json");
  writeFileSync(bad, JSON.stringify(doc));
  const start = startRegistry(server.url, { registryFile: bad });
  await expect(start).rejects.toThrow(/tools\[8\]\.source\.server: missing_server/);
  await expect(start).rejects.toThrow(/: cycle: dependency cycle: agent:(coordinator-agent@1\.0\.0 -> agent:digest-agent@2\.0\.0|digest-agent@2\.0\.0 -> agent:coordinator-agent@1\.0\.0)/);
});

describe("agentgateway's v2-full.json (test/fixtures/registry-v2/README.md)", () => {
  const V2_FULL = "test/fixtures/registry-v2/v2-full.json";

  it("is refused for its tool without a version, and for nothing else", async () => {
    const start = startRegistry(server.url, { registryFile: V2_FULL });
    await expect(start).rejects.toThrow(/tools\[1\]\.version: invalid_entry/);
    const message = await start.then(
      () => "",
      (e: Error) => e.message,
    );
    // The server's `suggest`, which no tool of the file serves, is the usual warning; no cycle.
    expect(message).toContain("servers[0].provides[1]: dangling_provides");
    expect(message).not.toMatch(/cycle/);
  });

  it("loads once that tool has a version: the agent's tool dependency is the server's tool, not its own skill", async () => {
    const doc = JSON.parse(readFileSync(V2_FULL, "utf8")) as { tools: Array<Record<string, unknown>> };
    doc.tools[1]!["version"] = "1.0.0";
    const fixed = join(dir, "v2-full-versioned.json");
    writeFileSync(fixed, JSON.stringify(doc));
    await using full = await startRegistry(server.url, { registryFile: fixed });
    const client = await RawClient.connect(server.url, configOf(full).prefix);
    try {
      const got = await client.request("get", { agent_type: "search-agent" });
      expect(got.body.agent).toMatchObject({ kind: "agent", status: "ready", depends: [{ type: "tool", name: "search", version: "1.0.0" }] });
      const g = await client.request("graph", { agent_type: "search-agent" });
      expect(g.body.edges).toEqual([
        { from: "agent:search-agent@1.0.0", to: "tool:search@1.0.0", capability: null },
        { from: "tool:search@1.0.0", to: "mcp_server:search-service@1.0.0", capability: "search" },
      ]);
      expect(g.body.problems.map((p: { code: string }) => p.code)).toEqual(["dangling_provides"]);
    } finally {
      await client.close();
    }
  });
});
