/**
 * The coordinator-facing queries through NATS on the example registry file: route, find,
 * search, discover, and tenant isolation on every op; plus the file's hot reload.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUERY_OPS } from "../../src/protocol/subjects.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const EXAMPLE = "deploy/config/agent-registry.json";
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "registry-file-"));
  file = join(dir, "agent-registry.json");
  copyFileSync(EXAMPLE, file);
  server = await withNatsServer();
  reg = await startRegistry(server.url, { registryFile: file });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  // Tenant agents: one for acme, one for globex, and a shared one offering the same skill.
  await c.request("tenant.acme.register.acme-search", { spec: spec("acme-search", { tenant_scope: "acme", capabilities: [{ name: "product.search", description: "Acme's own catalogue search", input_schema: {}, output_schema: {}, tags: ["commerce", "search"] }] }) });
  // Globex's output schema is a named one: `schema` names its users only to who can see them.
  await c.request("schema.put.GlobexItems", { version: "1.0.0", schema: { type: "array" } });
  await c.request("tenant.globex.register.globex-search", { spec: spec("globex-search", { tenant_scope: "globex", capabilities: [{ name: "product.search", description: "Globex catalogue search", input_schema: {}, output_schema: { $ref: "#GlobexItems:1.0.0" }, tags: ["commerce", "search"] }] }) });
  await c.request("register.busy-bee", { spec: spec("busy-bee", { max_concurrent_tasks: 1, capabilities: [{ name: "text.summarize", description: "summaries, one at a time", input_schema: {}, output_schema: {} }] }), instance_id: "b1" });
  // The last write is the heartbeat: discover's "busy" below needs the view to hold its active_tasks.
  const last = await c.request("heartbeat.busy-bee.b1", { active_tasks: 1 });
  await c.request("get", { agent_type: "busy-bee", min_revision: last.body.revision });
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("static registry file", () => {
  it("loads every entry as a ready agent with instance static", async () => {
    const r = await c.request("get", { agent_type: "bug-fixer" });
    expect(r.body.agent).toMatchObject({ status: "ready", nats_subject: "agent.tasks.bug-fixer", consumer_group: "bug-fixer", runtime: "acp-container" });
    expect(r.body.agent.instances.map((i: any) => i.instance_id)).toEqual(["static"]);
    expect(r.body.agent.a2a_card.name).toBe("bug-fixer");
    expect(r.body.agent.capabilities.map((x: any) => x.name)).toContain("bug.fix");
  });
});

describe("route", () => {
  it("scores skill, tags and runtime and names the winner's subject with ranked candidates", async () => {
    const r = await c.request("route", { skill: "bug.fix", tags: ["debugging", "code", "debugging"], preferred_runtime: "acp-container" });
    expect(r.ok).toBe(true);
    expect(r.body).toMatchObject({ agent_type: "bug-fixer", nats_subject: "agent.tasks.bug-fixer", runtime: "acp-container", score: 2.1 });
    expect(r.body.candidates[0]).toEqual({ agent_type: "bug-fixer", score: 2.1 });
    expect(r.body.candidates.length).toBeGreaterThan(1);
  });

  it("answers no_route when nothing scores above zero, invalid_request with no criterion", async () => {
    const none = await c.request("route", { skill: "nobody.does.this" });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe("no_route");
    expect((await c.request("route", {})).body.error.code).toBe("invalid_request");
  });
});

describe("find, search, discover", () => {
  it("finds by skill, tag and name, exactly one of them", async () => {
    expect((await c.request("find", { skill: "text.translate" })).body.agents.map((a: any) => a.agent_type)).toEqual(["translator"]);
    expect((await c.request("find", { tag: "sql" })).body.agents.map((a: any) => a.agent_type)).toEqual(["sql-analyst"]);
    expect((await c.request("find", { name: "summarizer" })).body.agents).toHaveLength(1);
    expect((await c.request("find", { skill: "a.b", tag: "x" })).body.error.code).toBe("invalid_request");
  });

  it("search ranks a person's words onto the capability whose examples say so", async () => {
    const r = await c.request("search", { query: "find the nil pointer bug", limit: 3 });
    expect(r.body.results[0]).toMatchObject({ agent_type: "bug-fixer", capability: "bug.fix" });
    expect(r.body.results[0].score).toBeGreaterThan(0);
    const sql = await c.request("search", { query: "Why is my SQL query slow?" });
    expect(sql.body.results[0].agent_type).toBe("sql-analyst");
    expect((await c.request("search", { query: "" })).body.error.code).toBe("invalid_request");
  });

  it("discover reports ready, busy and providers, filtered by capability", async () => {
    const all = await c.request("discover", {});
    const byId = new Map(all.body.agents.map((a: any) => [a.id, a]));
    expect((byId.get("busy-bee") as any).status).toBe("busy");
    expect((byId.get("summarizer") as any).status).toBe("ready");
    const one = await c.request("discover", { capability: "text.summarize" });
    expect(one.body.agents.map((a: any) => a.id).sort()).toEqual(["busy-bee", "summarizer"]);
  });
});

describe("tenant isolation", () => {
  it("plain subjects see shared agents only; a tenant sees shared plus its own, never another's", async () => {
    const plain = await c.request("lookup", { capability: "product.search" });
    expect(plain.body.providers.map((p: any) => p.agent_type)).toEqual(["product-search"]);
    const acme = await c.request("tenant.acme.lookup", { capability: "product.search" });
    expect(acme.body.providers.map((p: any) => p.agent_type).sort()).toEqual(["acme-search", "product-search"]);
    const bodies: Record<string, unknown> = {
      lookup: { capability: "product.search" },
      get: { agent_type: "globex-search" },
      list: {},
      capabilities: {},
      route: { skill: "product.search", tags: ["commerce"] },
      find: { skill: "product.search" },
      search: { query: "globex catalogue search" },
      discover: {},
      card: { agent_type: "globex-search" },
      toolspec: { agent_type: "globex-search" },
      check: { capability: "product.search", agent_type: "globex-search", payload: {} },
      schemas: {},
      schema: { name: "GlobexItems", version: "1.0.0" },
    };
    for (const op of QUERY_OPS) {
      for (const subject of [op, `tenant.acme.${op}`]) {
        const r = await c.request(subject, bodies[op]);
        // get echoes the name it was asked for in its not_found message; the agent is not shown.
        if (op === "get" || op === "card" || op === "toolspec" || op === "check") expect(r.body.error?.code, `${subject} must not show globex's agent`).toBe("not_found");
        else expect(JSON.stringify(r.body), `${subject} must not show globex's agent`).not.toContain("globex-search");
      }
      const own = await c.request(`tenant.globex.${op}`, bodies[op]);
      // A tool spec does not name its agent: that it answers (not not_found) is the point.
      if (op === "toolspec") expect(own.ok, `tenant.globex.${op} exports its own agent`).toBe(true);
      // route picks the best, and schemas lists schemas, which belong to no tenant.
      else if (op !== "route" && op !== "schemas") expect(JSON.stringify(own.body), `tenant.globex.${op} shows its own agent`).toContain("globex-search");
    }
    expect((await c.request("tenant.Not_A_Tenant.lookup", { capability: "x" })).body.error.code).toBe("invalid_request");
  });
});

describe("hot reload", () => {
  it("adds, changes and removes entries; a broken file keeps the last good state", async () => {
    const doc = JSON.parse(readFileSync(file, "utf8"));
    const removed = doc.agents.shift(); // code-reviewer leaves the file
    doc.agents[0].card.description = "Fixes bugs, now faster";
    doc.agents.push({ ...doc.agents[0], queueSubject: "agent.tasks.hotfixer", card: { ...doc.agents[0].card, name: "hotfixer", description: "new" } });
    writeFileSync(file, JSON.stringify(doc));
    await waitFor(() => reg.view.get("hotfixer")?.status === "ready" && reg.view.get(removed.card.name)?.status === "deregistered", {
      timeoutMs: 8000,
      message: "reload applied",
    });
    expect(reg.view.get("bug-fixer")?.spec.description).toBe("Fixes bugs, now faster");

    const before = (await reg.metrics.registryFileErrors.get()).values[0]?.value ?? 0;
    writeFileSync(file, "{ this is not json");
    await waitFor(async () => ((await reg.metrics.registryFileErrors.get()).values[0]?.value ?? 0) > before, { timeoutMs: 8000, message: "broken file counted" });
    expect(reg.view.get("hotfixer")?.status).toBe("ready");
    expect(reg.logs.some((l) => l.msg === "registry file not applied; keeping the last good state")).toBe(true);
  });

  it("refuses to start with a broken file, naming the rule, before any endpoint has answered", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ agents: [{ card: { name: "x", version: "1.0.0", description: "d", skills: [] }, queueSubject: "a.b", runtime: "r" }] }));
    const config = testConfig(server.url, { registryFile: bad });
    // A coordinator asking all along: before, the endpoints opened before the file was read,
    // and answered until the failed start had drained them.
    const probe = await RawClient.connect(server.url, config.prefix);
    let starting = true;
    let answered = 0;
    const asking = (async () => {
      while (starting) {
        const r = await probe.request("lookup", { capability: "x" }, 100).catch(() => null);
        if (r !== null) answered++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      await expect(startRegistry(server.url, {}, config)).rejects.toThrow(/at least one skill/);
    } finally {
      starting = false;
      await asking;
      await probe.close();
    }
    expect(answered).toBe(0);
  });
});
