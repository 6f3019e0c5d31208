/**
 * PROTOCOL.md section 10 through NATS and the ops server: agents register with the A2A cards
 * they already publish (every fixture shape, leniently, with the deviations named) and MCP
 * servers with their tools/list output; both become routable and searchable next to agents;
 * every agent exports as a strictly valid card (v1.0 and v0.3) and as MCP tools, over NATS and
 * HTTP; a card survives card -> register -> card; what cannot be used is refused with nothing
 * stored. Also through the SDK.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { InvalidCardError, RegistryClient, registerAgent } from "../../src/client/index.js";
import { checkCardSchema } from "../../src/domain/interop/a2a/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { CARD_FIXTURES, loadCard } from "../unit/a2a-fixtures.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

const toolspec = (name: string): Record<string, any> => JSON.parse(readFileSync(new URL(`../fixtures/mcp/${name}.json`, import.meta.url), "utf8"));

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

/** A lookup that has seen `revision` (the register reply's), so each test reads its own writes. */
const lookup = (capability: string, revision: number, extra: Record<string, unknown> = {}) => c.request("lookup", { capability, min_revision: revision, ...extra });

describe("registering with an A2A card", () => {
  it.each(CARD_FIXTURES)("imports the %s card leniently: routable, searchable, the card kept verbatim", async (fixture) => {
    const card = loadCard(fixture);
    const type = `card-${fixture.replace(/_/g, "-")}`;
    const r = await c.request(`register.${type}`, { a2a_card: card, nats_subject: `agents.${type}` });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(["0.3", "1.0"]).toContain(r.body.a2a_version);
    const skill = card.skills[0];
    const found = await lookup(skill.id, r.body.revision);
    expect(found.body.providers.map((p: { agent_type: string }) => p.agent_type)).toContain(type);
    const got = await c.request("get", { agent_type: type });
    expect(got.body.agent.a2a_card).toEqual(card);
    expect(got.body.agent.display_name).toBe(card.name);
    expect(got.body.agent.kind).toBe("agent");
    expect(got.body.agent.capabilities.map((cap: { name: string }) => cap.name)).toEqual(card.skills.map((s: { id: string }) => s.id));
  });

  it("names every deviation of a messy card as a warning with its path, and refuses it under strict with nothing stored", async () => {
    const card = loadCard("legacy-no-protocol-version");
    card.defaultInputModes = ["text"];
    delete card.skills[0].tags;
    const lenient = await c.request("register.messy-card", { a2a_card: card });
    expect(lenient.ok, JSON.stringify(lenient.body)).toBe(true);
    expect(lenient.body.warnings.some((w: string) => w.startsWith("a2a_card.skills.0") && /tags/.test(w))).toBe(true);
    expect(lenient.body.warnings.some((w: string) => w.startsWith("a2a_card.defaultInputModes"))).toBe(true);

    const strict = await c.request("register.strict-card", { a2a_card: card, strict: true });
    expect(strict.ok).toBe(false);
    expect(strict.body.error.code).toBe("invalid_card");
    expect(strict.body.error.issues.some((i: { path: string }) => i.path.startsWith("a2a_card.skills.0"))).toBe(true);
    expect((await c.request("get", { agent_type: "strict-card" })).body.error.code).toBe("not_found");
  });

  it("refuses a card it cannot build a spec from, and a hostile one, as invalid_card with paths", async () => {
    const noSkills = loadCard("v1_0-valid");
    noSkills.skills = [];
    const badId = loadCard("v1_0-valid");
    badId.skills[0].id = "has spaces";
    const remoteRef = loadCard("v1_0-valid");
    remoteRef.skills[0].inputSchema = { $ref: "https://schemas.example.test/evil.json" };
    for (const [type, card, code] of [
      ["no-skills", noSkills, "invalid_card"],
      ["bad-id", badId, "invalid_card"],
      ["remote-ref", remoteRef, "invalid_card"],
    ] as const) {
      const r = await c.request(`register.${type}`, { a2a_card: card });
      expect(r.ok, type).toBe(false);
      expect(r.body.error.code, `${type}: ${JSON.stringify(r.body)}`).toBe(code);
      expect(r.body.error.issues.length, type).toBeGreaterThan(0);
      expect(r.body.error.issues[0].path, type).toMatch(/^a2a_card\.skills/);
      expect((await c.request("get", { agent_type: type })).body.error.code).toBe("not_found");
    }
    const proto = await c.request("register.proto-card", `{"a2a_card":{"name":"x","__proto__":{"polluted":true}}}`);
    expect(proto.ok).toBe(false);
    expect(proto.body.error.code).toBe("invalid_request");
  });

  it("refuses a body with two forms, or card fields beside a spec", async () => {
    const both = await c.request("register.both", { spec: spec("both"), a2a_card: loadCard("v1_0-valid") });
    expect(both.body.error.code).toBe("invalid_request");
    const beside = await c.request("register.beside", { spec: spec("beside"), nats_subject: "x.y" });
    expect(beside.body.error.code).toBe("invalid_request");
    expect(beside.body.error.issues[0].path).toBe("nats_subject");
    const other = await c.request("register.named", { agent_type: "someone-else", a2a_card: loadCard("v1_0-valid") });
    expect(other.body.error.code).toBe("invalid_request");
  });

  it("keeps search over skill names, descriptions, tags and examples", async () => {
    const card = loadCard("v0_3-valid");
    const r = await c.request("register.search-card", { a2a_card: card, nats_subject: "agents.search-card" });
    expect(r.ok).toBe(true);
    const example = (card.skills[1].examples[1] as string).split(" ").slice(-2).join(" ");
    for (const query of [card.skills[0].tags[2], card.skills[1].name, example]) {
      const s = await c.request("search", { query, min_revision: r.body.revision });
      expect(s.body.results.map((x: { agent_type: string }) => x.agent_type), query).toContain("search-card");
    }
  });
});

describe("registering an MCP server with its tool spec", () => {
  it("makes each tool a capability with its schemas and annotations, found next to agents", async () => {
    const tools = toolspec("notes-server");
    const r = await c.request("register.notes-mcp", { mcp_toolspec: tools, kind: "mcp_server", description: "Notes vault", version: "2.1.0", owner_team: "notes" });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await c.request("get", { agent_type: "notes-mcp", min_revision: r.body.revision });
    expect(got.body.agent.kind).toBe("mcp_server");
    const first = got.body.agent.capabilities[0];
    expect(first.name).toBe(tools.tools[0].name);
    expect(first.input_schema).toEqual(tools.tools[0].inputSchema);
    expect(first.annotations).toEqual(tools.tools[0].annotations);
    expect(first.effective_annotations).toEqual({ ...tools.tools[0].annotations, readOnlyHint: true, openWorldHint: false });

    // An agent offering the same capability name: lookup lists both, kind filters.
    const agent = await c.request("register.notes-agent", { spec: spec("notes-agent", { capabilities: [{ name: first.name, description: "the same, as an agent", input_schema: {}, output_schema: {} }] }) });
    expect(agent.ok, JSON.stringify(agent.body)).toBe(true);
    const both = await lookup(first.name, agent.body.revision);
    expect(both.body.providers.map((p: { agent_type: string; kind: string }) => `${p.agent_type}:${p.kind}`).sort()).toEqual(["notes-agent:agent", "notes-mcp:mcp_server"]);
    const mcpOnly = await lookup(first.name, agent.body.revision, { kind: "mcp_server", read_only: true });
    expect(mcpOnly.body.providers.map((p: { agent_type: string }) => p.agent_type)).toEqual(["notes-mcp"]);
  });

  it("keeps GitHub's MCP Apps tools' _meta (test/fixtures/mcp/README.md): get shows it on the capability, toolspec and toolspec.json give it back", async () => {
    const tools = toolspec("github-server");
    const r = await c.request("register.github-mcp", { mcp_toolspec: tools, description: "GitHub", version: "0.30.0", owner_team: "github" });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(r.body.warnings).toEqual([]);
    const got = await c.request("get", { agent_type: "github-mcp", min_revision: r.body.revision });
    const caps = got.body.agent.capabilities as Array<Record<string, unknown>>;
    expect(caps.map((x) => [x["name"], x["_meta"]])).toEqual(tools.tools.map((t: Record<string, unknown>) => [t["name"], t["_meta"]]));
    expect(caps[0]!["_meta"]).toEqual({ ui: { resourceUri: "ui://github-mcp-server/pr-write", visibility: ["model", "app"] } });
    for (const cap of caps) expect(cap).not.toHaveProperty("mcp_extra");
    const exported = (await c.request("toolspec", { agent_type: "github-mcp" })).body.tools as Array<Record<string, unknown>>;
    expect(exported.map((t) => t["_meta"])).toEqual(tools.tools.map((t: Record<string, unknown>) => t["_meta"]));
    const http = (await (await fetch(`http://127.0.0.1:${reg.httpPort}/agents/github-mcp/toolspec.json`)).json()) as { tools: Array<Record<string, unknown>> };
    expect(http.tools.map((t) => t["_meta"])).toEqual(tools.tools.map((t: Record<string, unknown>) => t["_meta"]));

    // Annotations as given (get_me is read-only and says nothing of destruction), and the
    // defaults that apply beside them in the registry's own replies, never in the MCP tools.
    const getMe = caps.find((x) => x["name"] === "get_me")!;
    expect(getMe["annotations"]).toEqual({ idempotentHint: false, readOnlyHint: true, title: "Get my user profile" });
    expect(getMe["effective_annotations"]).toEqual({ title: "Get my user profile", readOnlyHint: true, idempotentHint: false, openWorldHint: true });
    const provider = (await lookup("get_me", r.body.revision)).body.providers.find((p: { agent_type: string }) => p.agent_type === "github-mcp");
    expect(provider.effective_annotations).toEqual(getMe["effective_annotations"]);
    expect(exported.map((t) => t["annotations"])).toEqual(tools.tools.map((t: Record<string, unknown>) => t["annotations"]));
    for (const tool of [...exported, ...http.tools]) expect(tool).not.toHaveProperty("effective_annotations");
    expect(http.tools.find((t) => t["name"] === "get_me")!["annotations"]).not.toHaveProperty("destructiveHint");

    // Past its bound, a kept key is refused with its path, and nothing is stored.
    const huge = toolspec("github-server");
    huge.tools[1]._meta.ui.note = "x".repeat(20_000);
    const big = await c.request("register.github-huge", { mcp_toolspec: huge, description: "GitHub", version: "0.30.0" });
    expect(big.status).toBe(400);
    expect(big.body.error).toMatchObject({ code: "invalid_card", issues: [{ path: "mcp_toolspec.tools.1._meta", message: expect.stringContaining("the limit is 16384") }] });
    expect((await c.request("get", { agent_type: "github-huge" })).body.error.code).toBe("not_found");
  });

  it("refuses a tool without inputSchema and a name that cannot be a capability, with the tool's path", async () => {
    const noSchema = toolspec("notes-server");
    delete noSchema.tools[1].inputSchema;
    const r = await c.request("register.no-schema", { mcp_toolspec: noSchema, description: "x", version: "1.0.0" });
    expect(r.body.error.code).toBe("invalid_card");
    expect(r.body.error.issues[0].path).toBe("mcp_toolspec.tools.1.inputSchema");
    const remote = toolspec("notes-server");
    remote.tools[2].inputSchema = { type: "object", properties: { q: { $ref: "https://schemas.example.test/q.json" } } };
    const rr = await c.request("register.remote-tool", { mcp_toolspec: remote, description: "x", version: "1.0.0" });
    expect(rr.body.error.code).toBe("invalid_card");
    expect(rr.body.error.issues[0].path).toMatch(/^mcp_toolspec\.tools\.2\.inputSchema/);
    const badName = toolspec("notes-server");
    badName.tools[0].name = "list notes";
    const b = await c.request("register.bad-name", { mcp_toolspec: badName, description: "x", version: "1.0.0" });
    expect(b.body.error.code).toBe("invalid_card");
    expect(b.body.error.issues[0].path).toBe("mcp_toolspec.tools.0.name");
  });
});

describe("exports", () => {
  it("exports any agent as a card valid strictly for v1.0 and v0.3, and as MCP tools", async () => {
    const r = await c.request("register.plain-agent", { spec: spec("plain-agent") });
    expect(r.ok).toBe(true);
    for (const version of ["1.0", "0.3"] as const) {
      const card = await c.request("card", { agent_type: "plain-agent", a2a_version: version, min_revision: r.body.revision });
      expect(card.ok, JSON.stringify(card.body)).toBe(true);
      expect(checkCardSchema(card.body.card, version), version).toEqual([]);
    }
    const tools = await c.request("toolspec", { agent_type: "plain-agent" });
    expect(tools.body.tools[0]).toMatchObject({ name: "plain-agent.run", inputSchema: { type: "object" } });
    expect((await c.request("card", { agent_type: "nobody" })).body.error.code).toBe("not_found");
    expect((await c.request("card", { agent_type: "plain-agent", a2a_version: "2.0" })).body.error.code).toBe("invalid_request");
  });

  it("keeps what a card said through card -> register -> card", async () => {
    const original = loadCard("v1_0-valid");
    const r = await c.request("register.round-trip", { a2a_card: original, nats_subject: "agents.round-trip" });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const exported = (await c.request("card", { agent_type: "round-trip", min_revision: r.body.revision })).body.card;
    expect(checkCardSchema(exported, "1.0")).toEqual([]);
    const skillKeys = (card: Record<string, any>) =>
      card.skills.map((s: Record<string, unknown>) => ({ id: s["id"], tags: s["tags"], examples: s["examples"], inputModes: s["inputModes"], outputModes: s["outputModes"] }));
    expect(skillKeys(exported)).toEqual(skillKeys(original));
    expect(exported.provider).toEqual(original.provider);
    expect(exported.capabilities?.extensions).toEqual(original.capabilities?.extensions);
    // And again: registering the export under another type exports the same card.
    const again = await c.request("register.round-trip-2", { a2a_card: exported, nats_subject: "agents.round-trip-2" });
    expect(again.ok, JSON.stringify(again.body)).toBe(true);
    const second = (await c.request("card", { agent_type: "round-trip-2", min_revision: again.body.revision })).body.card;
    expect(skillKeys(second)).toEqual(skillKeys(original));
  });

  it("serves both exports over HTTP for shared agents", async () => {
    const r = await c.request("register.http-agent", { spec: spec("http-agent") });
    expect(r.ok).toBe(true);
    await lookup("http-agent.run", r.body.revision);
    const base = `http://127.0.0.1:${reg.httpPort}`;
    const card = await fetch(`${base}/agents/http-agent/agent-card.json`);
    expect(card.status).toBe(200);
    expect(checkCardSchema(await card.json(), "1.0")).toEqual([]);
    const tools = await fetch(`${base}/agents/http-agent/toolspec.json`);
    expect(tools.status).toBe(200);
    expect(((await tools.json()) as { tools: unknown[] }).tools).toHaveLength(1);
    const missing = await fetch(`${base}/agents/nobody/agent-card.json`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
    expect((await fetch(`${base}/agents/Bad%20Type/toolspec.json`)).status).toBe(400);
  });
});

describe("through the SDK", () => {
  let nc: NatsConnection;
  let sdk: RegistryClient;
  beforeAll(async () => {
    nc = await connect({ servers: server.url });
    sdk = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  });
  afterAll(async () => {
    await nc?.close();
  });

  it("registers an agent with its card and an MCP server with its tools, and exports them", async () => {
    const agent = await registerAgent(nc, { agent_type: "sdk-card", a2a_card: loadCard("v0_3-valid"), nats_subject: "agents.sdk-card" }, { prefix: configOf(reg).prefix, heartbeatIntervalMs: 60_000 });
    const tools = await registerAgent(nc, { agent_type: "sdk-mcp", mcp_toolspec: toolspec("travel-server") as { tools: Array<Record<string, unknown>> }, description: "Travel tools", version: "1.2.0" }, { prefix: configOf(reg).prefix, heartbeatIntervalMs: 60_000 });
    try {
      expect(agent.registration.a2a_version).toBe("0.3");
      expect(agent.agentType).toBe("sdk-card");
      const card = await sdk.card("sdk-card", { a2aVersion: "0.3", minRevision: tools.registration.revision });
      expect(checkCardSchema(card.card, "0.3")).toEqual([]);
      const spec = await sdk.toolspec("sdk-mcp");
      expect(spec.tools.length).toBe(toolspec("travel-server").tools.length);
    } finally {
      await agent.close();
      await tools.close();
    }
    const bad = loadCard("v1_0-valid");
    bad.skills = [];
    await expect(registerAgent(nc, { agent_type: "sdk-bad", a2a_card: bad }, { prefix: configOf(reg).prefix })).rejects.toBeInstanceOf(InvalidCardError);
  });
});
