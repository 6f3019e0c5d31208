/**
 * registration-document.ts: which of the documents `register` and `validate` take a file is,
 * from its shape alone, and a clear refusal of anything else.
 */
import { describe, expect, it } from "vitest";
import { detectDocument, loadDocument, readRegistrationDocument } from "../../../src/cli/registration-document.js";

const spec = {
  agent_type: "summarizer",
  version: "1.0.0",
  description: "d",
  owner_team: "t",
  capabilities: [{ name: "text.summarize", description: "d", input_schema: {}, output_schema: {} }],
  nats_subject: "agents.summarizer.tasks",
  consumer_group: "summarizer",
};
// A v0.3 card has an object `capabilities` of its own (streaming, ...), which must not make it a spec.
const card = { name: "Greeter", description: "d", version: "1.0.0", url: "https://x.test", capabilities: { streaming: true }, skills: [{ id: "greet", name: "Greet" }] };
const tools = { tools: [{ name: "read_file", inputSchema: { type: "object" } }] };

const kindOf = (value: Record<string, unknown>) => {
  const d = detectDocument(value);
  return d.ok ? d.kind : `error: ${d.errors.join("; ")}`;
};

describe("detectDocument", () => {
  it("tells the five kinds apart", () => {
    expect(kindOf({ agents: [] })).toBe("registry_file");
    expect(kindOf(spec)).toBe("agent_spec");
    expect(kindOf(card)).toBe("a2a_card");
    expect(kindOf({ ...card, capabilities: undefined, supportedInterfaces: [{ url: "https://x.test" }] })).toBe("a2a_card");
    expect(kindOf(tools)).toBe("mcp_toolspec");
    for (const [source, value] of [["spec", spec], ["a2a_card", card], ["mcp_toolspec", tools]] as const) {
      const d = detectDocument({ [source]: value, agent_type: "x" });
      expect(d.ok && d.kind === "register_body" && d.source).toBe(source);
    }
  });

  it("takes an AgentSpec that carries an a2a_card of its own (as get --json shows one) for a spec", () => {
    expect(kindOf({ ...spec, a2a_card: card })).toBe("agent_spec");
  });

  it("takes a document naming an agent_type for a spec, so the spec's rules say what is missing", () => {
    expect(kindOf({ agent_type: "Broken" })).toBe("agent_spec");
    // An AgentSpec's `tools` are tool ids, not an MCP tool list.
    expect(kindOf({ agent_type: "x", tools: ["search"] })).toBe("agent_spec");
    expect(kindOf({ agent_type: "x", agents: [] })).toBe("agent_spec");
    expect(kindOf({ capabilities: "text.summarize" })).toBe("agent_spec");
  });

  it("leaves a card's or a tool list's own problems to the import, which names their paths", () => {
    expect(kindOf({ name: "Greeter", skills: "greet" })).toBe("a2a_card");
    expect(kindOf({ tools: {} })).toBe("mcp_toolspec");
  });

  it("takes an MCP Registry server.json by its namespaced name, its version, and its schema URL, remotes or packages", () => {
    const server = { name: "io.example/weather", version: "1.0.0", description: "d" };
    expect(kindOf({ ...server, $schema: "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json" })).toBe("mcp_server");
    expect(kindOf({ ...server, remotes: [] })).toBe("mcp_server");
    expect(kindOf({ ...server, packages: [] })).toBe("mcp_server");
    expect(kindOf({ mcp_server: server, mcp_toolspec: { tools: [] } })).toBe("register_body");
    // A name without a namespace, or a tools list at the top, is not a server.json.
    expect(kindOf({ name: "weather", version: "1.0.0", remotes: [] })).toMatch(/^error: not a document/);
    expect(kindOf({ ...server, remotes: [], tools: [] })).toBe("mcp_toolspec");
  });

  it("refuses a body with several forms, naming them", () => {
    expect(kindOf({ spec, a2a_card: card })).toBe("error: a register body carries one of spec, a2a_card, mcp_toolspec, mcp_server; this one has spec and a2a_card");
  });

  it("refuses anything else, naming what it found and what was expected", () => {
    expect(kindOf({})).toMatch(/^error: not a document the registry takes: an empty document; expected a registry file \(an agents list\), an AgentSpec/);
    const other = kindOf({ hello: 1, world: 2 });
    expect(other).toMatch(/^error: not a document the registry takes: a document with hello, world; expected /);
    expect(other).toContain("an A2A Agent Card (name and a skills list)");
    expect(other).toContain('an MCP tools/list result ({"tools": [...]})');
    // A card-like document without skills is not taken for a spec.
    expect(kindOf({ name: "Greeter", capabilities: { streaming: true } })).toMatch(/^error: not a document/);
  });
});

describe("reading files", () => {
  it("reads JSON and YAML fixtures and detects them", () => {
    const yaml = readRegistrationDocument("test/fixtures/cli/translator.register.yaml");
    expect(yaml.ok && yaml.kind === "register_body" && yaml.source).toBe("a2a_card");
    expect(readRegistrationDocument("test/fixtures/cli/invoice-reader.card.json")).toMatchObject({ ok: true, kind: "a2a_card" });
    expect(readRegistrationDocument("test/fixtures/cli/notes.tools.json")).toMatchObject({ ok: true, kind: "mcp_toolspec" });
    expect(readRegistrationDocument("test/fixtures/cli/weather.server.json")).toMatchObject({ ok: true, kind: "mcp_server" });
    expect(readRegistrationDocument("examples/summarizer.yaml")).toMatchObject({ ok: true, kind: "agent_spec" });
  });

  it("reports a file it cannot read", () => {
    expect(loadDocument("test/fixtures/cli/absent.json")).toEqual({ ok: false, errors: ["cannot read test/fixtures/cli/absent.json: ENOENT"] });
    expect(readRegistrationDocument("test/fixtures/cli/absent.json").ok).toBe(false);
  });
});
