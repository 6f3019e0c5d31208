import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSpecDocument } from "../../../../src/kit/documents.js";
import { registryEntryToSpec, validateRegistryFile } from "../../../../src/domain/spec/registry-file.js";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { EXAMPLE_REGISTRY_FILE } from "../../fixtures.js";

type Entry = Record<string, unknown> & { card: Record<string, unknown> };

function entry(name: string, patch: (e: Entry) => void = () => {}): Entry {
  const e: Entry = {
    card: {
      name,
      description: `${name} agent`,
      version: "1.0.0",
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      capabilities: { streaming: true },
      skills: [{ id: "skill.one", name: "Skill one", description: "does one", tags: ["t"], examples: ["do one"] }],
    },
    queueSubject: `agent.tasks.${name}`,
    runtime: "copilot-bridge",
    acpPort: 3000,
  };
  patch(e);
  return e;
}

const errorsOf = (...agents: unknown[]): string[] => {
  const result = validateRegistryFile({ agents });
  return result.ok ? [] : result.errors;
};

const skills = (e: Entry) => e.card["skills"] as Record<string, unknown>[];

describe("validateRegistryFile rules", () => {
  it.each<{ rule: string; agents: unknown[]; errors: string[] }>([
    {
      rule: "duplicate agent name",
      agents: [entry("a"), entry("b"), entry("a", (e) => (e["queueSubject"] = "agent.tasks.a2"))],
      errors: ['agents[2] (a): duplicate agent name "a" (first used by agents[0])'],
    },
    {
      rule: "duplicate queueSubject",
      agents: [entry("a"), entry("b", (e) => (e["queueSubject"] = "agent.tasks.a"))],
      errors: ['agents[1] (b): duplicate queueSubject "agent.tasks.a" (first used by agents[0] (a))'],
    },
    ...(["name", "description", "version"] as const).map((field) => ({
      rule: `missing card.${field}`,
      agents: [entry("a", (e) => delete e.card[field])],
      errors: [`agents[0]${field === "name" ? "" : " (a)"}: missing required field card.${field} (a non-empty string)`],
    })),
    ...(["queueSubject", "runtime"] as const).map((field) => ({
      rule: `missing ${field}`,
      agents: [entry("a", (e) => (e[field] = ""))],
      errors: [`agents[0] (a): missing required field ${field} (a non-empty string)`],
    })),
    {
      rule: "missing card",
      agents: [{ queueSubject: "x", runtime: "r" }],
      errors: ["agents[0]: missing required field card"],
    },
    { rule: "entry not an object", agents: ["nope"], errors: ["agents[0]: entry must be an object"] },
    {
      rule: "acpPort must be > 0",
      agents: [entry("a", (e) => (e["acpPort"] = 0)), entry("b", (e) => (e["acpPort"] = "80"))],
      errors: ["agents[0] (a): acpPort must be > 0 (an integer port, got 0)", 'agents[1] (b): acpPort must be > 0 (an integer port, got "80")'],
    },
    {
      rule: "at least one skill",
      agents: [entry("a", (e) => (e.card["skills"] = [])), entry("b", (e) => delete e.card["skills"])],
      errors: ["agents[0] (a): at least one skill is required in card.skills", "agents[1] (b): at least one skill is required in card.skills"],
    },
    {
      rule: "skill id and name non-empty",
      agents: [entry("a", (e) => (skills(e) as unknown[]).push({ id: "", name: "" }, "x"))],
      errors: [
        "agents[0] (a): card.skills[1]: skill id must be a non-empty string",
        "agents[0] (a): card.skills[1]: skill name must be a non-empty string",
        "agents[0] (a): card.skills[2]: skill must be an object",
      ],
    },
    {
      rule: "duplicate skill id",
      agents: [entry("a", (e) => skills(e).push({ id: "skill.one", name: "Again" }))],
      errors: ['agents[0] (a): card.skills[1]: duplicate skill id "skill.one" (also card.skills[0])'],
    },
    {
      rule: "card.name must be an agent_type token",
      agents: [entry("Code Reviewer")],
      errors: [
        'agents[0] (Code Reviewer): card.name "Code Reviewer" is not a valid agent_type (lower-case letters, digits, "_" and "-", 1..128 characters)',
      ],
    },
    {
      rule: "schema: skill id must be a capability name",
      agents: [entry("a", (e) => (skills(e)[0]!["id"] = "Skill One"))],
      errors: ["agents[0] (a): card.skills[0].id: dot-separated tokens of [A-Za-z0-9_-] (AgentSpec capabilities.0.name)"],
    },
    {
      rule: "schema: version must be semver",
      agents: [entry("a", (e) => (e.card["version"] = "v1"))],
      errors: ["agents[0] (a): card.version: must be semver X.Y.Z[-prerelease] (AgentSpec version)"],
    },
    {
      rule: "schema: queueSubject without wildcards",
      agents: [entry("a", (e) => (e["queueSubject"] = "agent.tasks.*"))],
      errors: ["agents[0] (a): queueSubject: a NATS subject without wildcards, spaces or control characters (AgentSpec nats_subject)"],
    },
  ])("$rule", ({ agents, errors }) => {
    expect(errorsOf(...agents)).toEqual(errors);
  });

  it("reports acpPort above 65535 through the schema, named in the file's terms", () => {
    const [error] = errorsOf(entry("a", (e) => (e["acpPort"] = 70000)));
    expect(error).toMatch(/^agents\[0\] \(a\): acpPort: .*\(AgentSpec acp_port\)$/);
  });

  it("reports every error of every entry at once", () => {
    const errors = errorsOf(entry("a", (e) => (e.card["skills"] = [])), entry("b", (e) => delete e["runtime"]), entry("a"));
    expect(errors).toHaveLength(4);
  });

  it.each([null, [], {}, { agents: {} }, "agents"])("refuses a file that is not {agents: [...]}: %j", (raw) => {
    expect(validateRegistryFile(raw)).toEqual({ ok: false, errors: ['registry file: must be an object with an "agents" array'] });
  });

  it("accepts an empty agents list", () => {
    expect(validateRegistryFile({ agents: [] })).toEqual({ ok: true, specs: [] });
  });
});

describe("mapping to AgentSpec", () => {
  it("maps a card as documented", () => {
    const e = entry("bug-fixer", (x) => {
      x.card["provider"] = { organization: "platform-eng" };
      skills(x).push({ id: "bug.triage", name: "Triage" });
    });
    expect(registryEntryToSpec(e)).toEqual({
      agent_type: "bug-fixer",
      version: "1.0.0",
      description: "bug-fixer agent",
      owner_team: "platform-eng",
      capabilities: [
        { name: "skill.one", description: "does one", input_schema: {}, output_schema: {}, tags: ["t"], examples: ["do one"] },
        { name: "bug.triage", description: "Triage", input_schema: {}, output_schema: {}, tags: [], examples: [] },
      ],
      nats_subject: "agent.tasks.bug-fixer",
      consumer_group: "bug-fixer",
      runtime: "copilot-bridge",
      acp_port: 3000,
      a2a_card: e.card,
    });
  });

  it("takes a skill's inputSchema and outputSchema as an A2A card registration does", () => {
    const input = { type: "object", properties: { q: { type: "string" } } };
    const spec = registryEntryToSpec(entry("a", (e) => Object.assign(skills(e)[0]!, { inputSchema: input, outputSchema: { type: "string" } })));
    expect(spec.capabilities[0]).toMatchObject({ input_schema: input, output_schema: { type: "string" } });
  });

  it("names a skill schema the AgentSpec refuses by its card field", () => {
    expect(errorsOf(entry("a", (e) => (skills(e)[0]!["inputSchema"] = "not a schema")))).toEqual([
      expect.stringMatching(/^agents\[0\] \(a\): card\.skills\[0\]\.inputSchema: .*\(AgentSpec capabilities\.0\.input_schema\)$/),
    ]);
  });

  it('defaults owner_team to "static" and leaves acp_port out when not given', () => {
    const spec = registryEntryToSpec(entry("a", (e) => delete e["acpPort"]));
    expect(spec.owner_team).toBe("static");
    expect("acp_port" in spec).toBe(false);
  });
});

describe("the example file deploy/config/agent-registry.json", () => {
  const result = validateRegistryFile(JSON.parse(readFileSync(EXAMPLE_REGISTRY_FILE, "utf8")));

  it("is valid and maps to specs that pass agentSpecSchema", () => {
    expect(result).toMatchObject({ ok: true });
    if (!result.ok) return;
    expect(result.specs.length).toBeGreaterThanOrEqual(6);
    for (const spec of result.specs) expect(agentSpecSchema.safeParse(spec).success).toBe(true);
  });

  it("covers several runtimes, examples and the bug-fixer's nil pointer example", () => {
    if (!result.ok) throw new Error(result.errors.join("\n"));
    expect(new Set(result.specs.map((s) => s.runtime))).toEqual(new Set(["copilot-bridge", "acp-container"]));
    const bugFixer = result.specs.find((s) => s.agent_type === "bug-fixer");
    expect(bugFixer?.capabilities.flatMap((c) => c.examples ?? []).some((x) => /nil[- ]pointer/.test(x))).toBe(true);
  });
});

describe("parseSpecDocument", () => {
  const yaml = "agent_type: summarizer\nversion: 1.0.0\ncapabilities:\n  - name: text.summarize\n    tags: [text]\n";

  it("parses YAML and JSON into the same object", () => {
    const fromYaml = parseSpecDocument(yaml, "yaml");
    expect(fromYaml).toEqual({
      ok: true,
      value: { agent_type: "summarizer", version: "1.0.0", capabilities: [{ name: "text.summarize", tags: ["text"] }] },
    });
    expect(parseSpecDocument(`\uFEFF${JSON.stringify(fromYaml.ok && fromYaml.value)}`, "json")).toEqual(fromYaml);
  });

  it.each<[string, "json" | "yaml", RegExp]>([
    ["{nope", "json", /^invalid JSON: /],
    ["[1, 2]", "json", /^a spec document must be an object/],
    ["a: 1\na: 2\n", "yaml", /^invalid YAML: Map keys must be unique at line 2, column 1$/],
    ["a: 1\n---\nb: 2\n", "yaml", /^invalid YAML: Source contains multiple documents/],
    ["just a string", "yaml", /^a spec document must be an object/],
    ["", "yaml", /^a spec document must be an object/],
  ])("refuses %j (%s)", (text, kind, message) => {
    const result = parseSpecDocument(text, kind);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatch(message);
  });
});
