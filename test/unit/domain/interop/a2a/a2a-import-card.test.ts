/**
 * importCard (PROTOCOL.md section 10.1): one test per rule of the mapping, of lenient and
 * strict checking, and of what is always refused.
 */
import { describe, expect, it } from "vitest";
import { importCard, MAX_CARD_WARNINGS, type ImportCardOptions } from "../../../../../src/domain/interop/a2a/index.js";
import { parseSpec, validateSpec } from "../../../../../src/domain/spec/validation.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { agentSpecSchema } from "../../../../../src/domain/spec/spec.js";
import { MAX_CAPABILITY_EXAMPLES, MAX_CAPABILITY_TAGS } from "../../../../../src/domain/interop/a2a/skill-capability.js";
import { CARD_FIXTURES, loadCard } from "../../../a2a-fixtures.js";
import { thrownRegistryError } from "../../../registry-error.js";

const imported = (card: unknown, options: Partial<ImportCardOptions> = {}) => importCard(card, { agent_type: "card-agent", ...options });
const refusal = (card: unknown, options: Partial<ImportCardOptions> = {}) => {
  const error = thrownRegistryError(() => imported(card, options));
  expect(error.code).toBe("invalid_card");
  return error.issues ?? [];
};

describe("mapping a card to a spec", () => {
  it("maps a strictly valid v0.3 card field by field, with no warning", () => {
    const card = loadCard("v0_3-valid");
    const { spec, warnings, a2aVersion } = imported(card, { agent_type: "invoices" });
    expect(a2aVersion).toBe("0.3");
    expect(warnings).toEqual([]);
    expect(spec).toEqual({
      agent_type: "invoices",
      version: "3.4.1",
      description: "Extracts totals, dates and line items from supplier invoices.",
      display_name: "Invoice Reader",
      owner_team: "Ledgerline Finance",
      url: "https://invoices.example.test/a2a/jsonrpc",
      nats_subject: "agent.tasks.invoices",
      consumer_group: "invoices",
      kind: "agent",
      a2a_card: card,
      representative_queries: ["What is the gross total of this invoice?", "List the items on page 2", "Which line has the highest amount?"],
      capabilities: [
        {
          name: "invoice.extract_totals",
          description: "Finds the net, tax and gross totals of an invoice.",
          tags: ["invoices", "finance", "extraction"],
          examples: ["What is the gross total of this invoice?"],
          input_schema: {},
          output_schema: {},
        },
        {
          name: "invoice.line_items",
          description: "Lists every line item with quantity and unit price.",
          tags: ["invoices"],
          examples: ["List the items on page 2", "Which line has the highest amount?"],
          input_schema: {},
          output_schema: {},
        },
      ],
    });
    expect(spec.a2a_card).toBe(card);
  });

  it("takes a v1.0 card's url from its first interface", () => {
    const { spec, warnings, a2aVersion } = imported(loadCard("v1_0-valid"));
    expect([a2aVersion, warnings]).toEqual(["1.0", []]);
    expect(spec.url).toBe("https://routes.example.test/a2a/v1");
    expect(spec.owner_team).toBe("Northwind Logistics");
    expect(spec.capabilities.map((c) => c.name)).toEqual(["route.plan", "route.eta"]);
  });

  it("lets the body's fields override the defaults", () => {
    const { spec } = imported(loadCard("v1_0-valid"), { nats_subject: "fleet.routes", consumer_group: "planners", owner_team: "ops", tenant_scope: "north" });
    expect(spec).toMatchObject({ nats_subject: "fleet.routes", consumer_group: "planners", owner_team: "ops", tenant_scope: "north" });
  });

  it('uses "unknown" as owner_team when neither the body nor a provider names one', () => {
    const card = loadCard("v1_0-valid");
    delete card["provider"];
    expect(imported(card).spec.owner_team).toBe("unknown");
    expect(imported({ ...card, provider: { organization: "" } }).spec.owner_team).toBe("unknown");
  });

  it("describes a capability by the skill's name when the skill has no description", () => {
    const card = loadCard("v1_0-valid");
    delete card["skills"][1].description;
    expect(imported(card).spec.capabilities[1]?.description).toBe("Estimate arrival");
  });

  it("takes input and output schemas from Registry v2 skills, and dependencies from the sbom extension", () => {
    const { spec, warnings } = imported(loadCard("sbom"), { strict: true });
    expect(warnings).toEqual([]);
    expect(spec.capabilities[0]?.input_schema).toMatchObject({ required: ["sku", "quantity"] });
    expect(spec.capabilities[0]?.output_schema).toMatchObject({ required: ["orderId"] });
    expect(spec.capabilities[1]).toMatchObject({ input_schema: {}, output_schema: {} });
    expect(spec.depends).toEqual([
      { type: "tool", name: "inventory_check", version: "1.0.0" },
      { type: "tool", name: "payment_charge", version: "1.4.2" },
      { type: "agent", name: "shipping-agent", version: "3.0.0", capability: "shipping.create" },
    ]);
  });

  it("leaves out an sbom dependency the spec cannot record, and says why", () => {
    const card = loadCard("sbom");
    card["capabilities"].extensions[0].params.depends.push({ type: "tool", name: "find_products" });
    const { spec, warnings } = imported(card);
    expect(spec.depends).toHaveLength(3);
    expect(warnings).toEqual([expect.stringMatching(/^a2a_card\.capabilities\.extensions\.0\.params\.depends\.3: left out of the spec's depends: version: /)]);
  });

  it("produces specs that pass the AgentSpec's own validation, schemas compiled", () => {
    const checker = new SchemaChecker();
    for (const name of CARD_FIXTURES) {
      const { spec } = imported(loadCard(name));
      expect(validateSpec(spec, checker).spec.agent_type).toBe("card-agent");
    }
  });
});

describe("version", () => {
  it.each([
    ["1.0", "1.0.0"],
    ["v2", "2.0.0"],
    ["V1.2.3-rc.1", "1.2.3-rc.1"],
    ["1.2.3+build.7", "1.2.3"],
    ["01.2", "1.2.0"],
  ])("completes %j to %s with a warning", (given, version) => {
    const { spec, warnings } = imported({ ...loadCard("v1_0-valid"), version: given });
    expect(spec.version).toBe(version);
    expect(warnings).toEqual([`a2a_card.version: ${JSON.stringify(given)} is not semver; registered as ${version}`]);
  });

  it.each(["latest", "2024-05-01", "1.2.3.4", "99999999999999999999"])("refuses %j", (given) => {
    expect(refusal({ ...loadCard("v1_0-valid"), version: given })).toEqual([{ path: "a2a_card.version", message: expect.stringContaining("is not a version the registry can use") }]);
  });
});

describe("cards the registry cannot use are refused, lenient or strict", () => {
  it.each(["name", "description", "version"])("without a %s", (field) => {
    for (const value of [undefined, "", "   ", 7]) {
      const card = { ...loadCard("v1_0-valid"), [field]: value };
      expect(refusal(card).map((i) => i.path)).toEqual([`a2a_card.${field}`]);
    }
  });

  it("without a skill that has an id and a name", () => {
    for (const skills of [undefined, [], [{ id: "a" }, { name: "b" }, "c"]]) {
      const issues = refusal({ ...loadCard("v1_0-valid"), skills });
      expect(issues.map((i) => i.path)).toContain("a2a_card.skills");
    }
  });

  it.each(["book meeting", "a..b", ".a", "ünïcode", "x".repeat(257), ""])("with a skill id %j that is not a capability name", (id) => {
    const card = loadCard("v1_0-valid");
    card["skills"][1].id = id;
    expect(refusal(card)).toEqual([{ path: "a2a_card.skills.1.id", message: expect.stringContaining("is not a capability name") }]);
  });

  it("with two skills of the same id", () => {
    const card = loadCard("v1_0-valid");
    card["skills"][1].id = "route.plan";
    expect(refusal(card)).toEqual([{ path: "a2a_card.skills.1.id", message: 'duplicate skill id "route.plan" (also skills.0): capability names are unique' }]);
  });

  it("that is not an object", () => {
    for (const card of [null, "card", [loadCard("v1_0-valid")], 3]) expect(refusal(card)).toEqual([{ path: "a2a_card", message: "expected an object" }]);
  });

  it("with more skills than a spec has capabilities", () => {
    const card = loadCard("v1_0-valid");
    card["skills"] = Array.from({ length: 257 }, (_, i) => ({ id: `s${i}`, name: `S${i}`, description: "d", tags: [] }));
    expect(refusal(card)).toEqual([{ path: "a2a_card.skills", message: "257 skills; the limit is 256 (one capability each)" }]);
  });

  it("with a value the AgentSpec refuses, named at the card path it came from", () => {
    const cases: Array<[(c: Record<string, any>) => void, string]> = [
      [(c) => (c["description"] = "d".repeat(9000)), "a2a_card.description"],
      [(c) => (c["name"] = "n".repeat(2000)), "a2a_card.name"],
      [(c) => (c["skills"][1].description = "d".repeat(9000)), "a2a_card.skills.1.description"],
      [(c) => (c["skills"][0].inputSchema = "a string"), "a2a_card.skills.0.inputSchema"],
      [(c) => (c["supportedInterfaces"][0].url = `https://a.test/${"p".repeat(2100)}`), "a2a_card.supportedInterfaces.0.url"],
      [(c) => (c["provider"].organization = "o".repeat(300)), "a2a_card.provider.organization"],
    ];
    for (const [change, path] of cases) {
      const card = loadCard("v1_0-valid");
      change(card);
      expect(refusal(card).map((i) => i.path)).toEqual([path]);
    }
    const legacy = loadCard("v0_3-valid");
    legacy["url"] = `https://a.test/${"p".repeat(2100)}`;
    expect(refusal(legacy).map((i) => i.path)).toEqual(["a2a_card.url"]);
  });

  it("but leaves the body's own fields to the spec's validation (invalid_spec, not invalid_card)", () => {
    const { spec } = imported(loadCard("v1_0-valid"), { nats_subject: "has space" });
    expect(thrownRegistryError(() => parseSpec(spec)).code).toBe("invalid_spec");
  });
});

describe("lenient and strict", () => {
  it("skills without tags: warnings when lenient, refused with issues when strict", () => {
    const card = loadCard("skills-without-tags");
    const { spec, warnings } = imported(card);
    expect(warnings).toEqual(["a2a_card.skills.0.tags: missing; A2A v0.3.0 requires it", "a2a_card.skills.1.tags: missing; A2A v0.3.0 requires it"]);
    expect(spec.capabilities.map((c) => c.tags)).toEqual([[], []]);
    const error = thrownRegistryError(() => imported(card, { strict: true }));
    expect(error.code).toBe("invalid_card");
    expect(error.message).toMatch(/^a2a_card does not conform to A2A v0\.3\.0 \(strict\): a2a_card\.skills\.0\.tags: missing/);
    expect(error.issues).toEqual([
      { path: "a2a_card.skills.0.tags", message: "missing; A2A v0.3.0 requires it" },
      { path: "a2a_card.skills.1.tags", message: "missing; A2A v0.3.0 requires it" },
    ]);
  });

  it("a legacy card without protocolVersion, with a field no version has", () => {
    const card = loadCard("legacy-no-protocol-version");
    const { spec, warnings, a2aVersion } = imported(card);
    expect(a2aVersion).toBe("0.3");
    expect(spec).toMatchObject({ version: "1.0.0", url: "http://weather.internal:8080/" });
    expect(warnings).toEqual([
      "a2a_card.protocolVersion: missing; A2A v0.3.0 requires it",
      "a2a_card.authentication: not a field of A2A v0.3.0: kept in the card, not used",
      'a2a_card.defaultInputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.defaultOutputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.version: "1.0" is not semver; registered as 1.0.0',
    ]);
    expect(refusal(card, { strict: true })).toEqual([{ path: "a2a_card.protocolVersion", message: "missing; A2A v0.3.0 requires it" }]);
  });

  it('"text" modes are warned about in strict mode too, and do not refuse the card', () => {
    const { warnings } = imported(loadCard("text-modes"), { strict: true });
    expect(warnings).toEqual([
      'a2a_card.defaultInputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.defaultInputModes.1: "file" is not a MIME type (application/octet-stream is meant?)',
      'a2a_card.defaultOutputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.skills.0.inputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.skills.0.inputModes.1: "data" is not a MIME type (application/json is meant?)',
      'a2a_card.skills.0.outputModes.0: "text" is not a MIME type (text/plain is meant?)',
      'a2a_card.version: "v2" is not semver; registered as 2.0.0',
    ]);
  });

  it("a hybrid card is read as v1.0, its v0.3 fields named", () => {
    const { spec, warnings, a2aVersion } = imported(loadCard("hybrid"));
    expect(a2aVersion).toBe("1.0");
    expect(spec.url).toBe("https://translate.example.test/a2a/v1");
    expect(warnings).toEqual([
      expect.stringMatching(/^a2a_card\.securitySchemes\.key: must set exactly one of apiKeySecurityScheme/),
      ...["protocolVersion", "url", "preferredTransport", "security", "capabilities.stateTransitionHistory"].map(
        (path) => `a2a_card.${path}: a field of A2A v0.3.0, not of A2A v1.0 (this card is read as 1.0): kept in the card, not used`,
      ),
    ]);
  });

  it("a skill without an id or a name makes no capability when lenient, and is refused when strict", () => {
    const card = loadCard("v1_0-valid");
    card["skills"].push({ name: "No id", description: "d", tags: [] }, { id: "no.name", description: "d", tags: [] });
    const { spec, warnings } = imported(card);
    expect(spec.capabilities.map((c) => c.name)).toEqual(["route.plan", "route.eta"]);
    expect(warnings).toEqual([
      "a2a_card.skills.2.id: missing; A2A v1.0 requires it",
      "a2a_card.skills.3.name: missing; A2A v1.0 requires it",
      "a2a_card.skills.2: no capability made from this skill: it needs a string id and a non-empty name",
      "a2a_card.skills.3: no capability made from this skill: it needs a string id and a non-empty name",
    ]);
    expect(refusal(card, { strict: true }).map((i) => i.path)).toEqual(["a2a_card.skills.2.id", "a2a_card.skills.3.name"]);
  });

  it("strict accepts the strictly valid cards", () => {
    for (const name of ["v0_3-valid", "v1_0-valid", "sbom"] as const) expect(imported(loadCard(name), { strict: true }).warnings).toEqual([]);
  });
});

describe("bounds", () => {
  it("keeps the tags and examples a capability can hold, and says what it left out", () => {
    const card = loadCard("v1_0-valid");
    card["skills"][0].tags = ["ok", "", "t".repeat(300), ...Array.from({ length: 70 }, (_, i) => `t${i}`)];
    card["skills"][0].examples = ["fine", "e".repeat(5000)];
    const { spec, warnings } = imported(card);
    expect(spec.capabilities[0]?.tags).toHaveLength(MAX_CAPABILITY_TAGS);
    expect(spec.capabilities[0]?.examples).toEqual(["fine"]);
    expect(warnings).toEqual([
      "a2a_card.skills.0.tags.1: left out of the capability: not a tag of 1..256 characters",
      "a2a_card.skills.0.tags.2: left out of the capability: not a tag of 1..256 characters",
      "a2a_card.skills.0.tags: only the first 64 are kept on the capability (71 given)",
      "a2a_card.skills.0.examples.1: left out of the capability: not an example of up to 4096 characters",
    ]);
    expect(agentSpecSchema.safeParse(spec).success).toBe(true);
  });

  it("holds the capability limits equal to the AgentSpec's", () => {
    const cap = { name: "a", description: "d", input_schema: {}, output_schema: {} };
    const fits = (field: "tags" | "examples", n: number) =>
      agentSpecSchema.shape.capabilities.element.safeParse({ ...cap, [field]: Array.from({ length: n }, (_, i) => `x${i}`) }).success;
    expect([fits("tags", MAX_CAPABILITY_TAGS), fits("tags", MAX_CAPABILITY_TAGS + 1)]).toEqual([true, false]);
    expect([fits("examples", MAX_CAPABILITY_EXAMPLES), fits("examples", MAX_CAPABILITY_EXAMPLES + 1)]).toEqual([true, false]);
  });

  it(`lists at most ${MAX_CARD_WARNINGS} warnings, then counts the rest`, () => {
    const card = loadCard("v1_0-valid");
    for (let i = 0; i < 30; i++) card[`x-field-${i}`] = i;
    const { warnings } = imported(card);
    expect(warnings).toHaveLength(MAX_CARD_WARNINGS + 1);
    expect(warnings[0]).toBe("a2a_card.x-field-0: not a field of A2A v1.0: kept in the card, not used");
    expect(warnings.at(-1)).toBe("and 10 more warnings about a2a_card");
  });

  it("names at most 20 issues when refusing", () => {
    const card = loadCard("v1_0-valid");
    card["skills"] = Array.from({ length: 40 }, (_, i) => ({ id: `bad id ${i}`, name: "n", description: "d", tags: [] }));
    expect(refusal(card)).toHaveLength(20);
  });
});

describe("representative queries (v1.2)", () => {
  const withExamples = (examples: unknown[]) => {
    const card = loadCard("v0_3-valid");
    card.skills = [{ ...card.skills[0], examples }];
    return imported(card).spec;
  };

  it("are the skills' first 5 distinct examples that read as queries, not payloads", () => {
    const spec = withExamples(["a", "b", "a", '{"stops": []}', "[1]", "c", "d", "e", "f"]);
    expect(spec.representative_queries).toEqual(["a", "b", "c", "d", "e"]);
    expect(() => agentSpecSchema.parse(spec)).not.toThrow();
  });

  it("are left out with fewer than 2 examples or only ones too long for the field", () => {
    expect(withExamples(["only one"]).representative_queries).toBeUndefined();
    expect(withExamples(["x".repeat(513), "fine"]).representative_queries).toBeUndefined();
  });
});
