/**
 * exportCard (PROTOCOL.md section 10.3): cards kept verbatim, cards converted between A2A
 * versions, cards built from a spec alone; every one strictly valid for its version.
 */
import { describe, expect, it } from "vitest";
import { checkCardSchema, exportCard, type A2aVersion } from "../../../../../src/domain/interop/a2a/index.js";
import { fieldAdvice } from "../../../../../src/domain/interop/a2a/card-advice.js";
import { parseSpec } from "../../../../../src/domain/spec/validation.js";
import type { AgentSpec } from "../../../../../src/domain/spec/spec.js";
import { CARD_FIXTURES, importedSpec, loadCard } from "../../../a2a-fixtures.js";

/** A card for `version` with nothing that version does not define. */
function expectStrict(card: Record<string, unknown>, version: A2aVersion): void {
  expect(checkCardSchema(card, version)).toEqual([]);
  expect(fieldAdvice(card, version)).toEqual([]);
}

const plainSpec = (patch: Partial<AgentSpec> = {}): AgentSpec =>
  parseSpec({
    agent_type: "pricing",
    version: "1.4.0",
    description: "Prices baskets",
    owner_team: "commerce",
    nats_subject: "agent.tasks.pricing",
    consumer_group: "pricing",
    capabilities: [
      { name: "price.quote", description: "Quotes a basket", input_schema: { type: "object", properties: { items: { type: "array" } } }, output_schema: {}, tags: ["pricing"], examples: ["quote 3 apples"] },
      { name: "price.history", description: "Past prices", input_schema: {}, output_schema: {}, title: "Price history" },
    ],
    ...patch,
  });

describe("a stored card already of the requested version", () => {
  it.each([
    ["v0_3-valid", "0.3"],
    ["v1_0-valid", "1.0"],
    ["sbom", "0.3"],
  ] as const)("%s is returned as it is, signatures included", (name, version) => {
    const card = loadCard(name);
    const exported = exportCard(importedSpec(card), version);
    expect(exported).toEqual(card);
    expect(exported).not.toBe(card);
  });

  it("is rendered again when its skills are not the spec's capabilities", () => {
    const spec = importedSpec(loadCard("v1_0-valid"));
    const fewer = { ...spec, capabilities: spec.capabilities.slice(0, 1) };
    const exported = exportCard(fewer, "1.0");
    expect((exported["skills"] as unknown[]).length).toBe(1);
    expect(exported["signatures"]).toBeUndefined();
    expectStrict(exported, "1.0");
  });
});

describe("v0.3 -> v1.0", () => {
  const exported = exportCard(importedSpec(loadCard("v0_3-valid")), "1.0");

  it("is strictly valid v1.0 and drops the signatures of the v0.3 content", () => {
    expectStrict(exported, "1.0");
    expect(exported["signatures"]).toBeUndefined();
  });

  it("turns url, preferredTransport and additionalInterfaces into supportedInterfaces at the card's protocolVersion", () => {
    expect(exported["supportedInterfaces"]).toEqual([
      { url: "https://invoices.example.test/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "0.3.0" },
      { url: "https://invoices.example.test/a2a/rest", protocolBinding: "HTTP+JSON", protocolVersion: "0.3.0" },
    ]);
  });

  it("moves supportsAuthenticatedExtendedCard into capabilities and leaves stateTransitionHistory out", () => {
    expect(exported["capabilities"]).toEqual({
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: true,
      extensions: [{ uri: "https://ledgerline.example.test/ext/audit-trail/v1", description: "Every answer cites its source page", required: false, params: { retentionDays: 30 } }],
    });
  });

  it("converts security schemes and requirements; an OAuth scheme keeps its first flow", () => {
    expect(exported["securitySchemes"]).toEqual({
      ledger_oauth: {
        oauth2SecurityScheme: {
          description: "Ledgerline accounts",
          flows: { authorizationCode: { authorizationUrl: "https://auth.ledgerline.example.test/authorize", tokenUrl: "https://auth.ledgerline.example.test/token", scopes: { "invoices:read": "Read invoices" } } },
        },
      },
      partner_key: { apiKeySecurityScheme: { location: "header", name: "X-Partner-Key" } },
    });
    expect(exported["securityRequirements"]).toEqual([{ schemes: { ledger_oauth: { list: ["invoices:read"] } } }, { schemes: { partner_key: { list: [] } } }]);
    expect((exported["skills"] as any[])[1].securityRequirements).toEqual([{ schemes: { ledger_oauth: { list: ["invoices:read"] } } }]);
  });

  it("keeps provider, links, modes and skills as they were", () => {
    const card = loadCard("v0_3-valid");
    for (const field of ["name", "description", "version", "provider", "iconUrl", "documentationUrl", "defaultInputModes", "defaultOutputModes"]) expect(exported[field]).toEqual(card[field]);
    const { security, ...lineItems } = card["skills"][1];
    expect(security).toBeDefined();
    expect(exported["skills"]).toEqual([card["skills"][0], { ...lineItems, securityRequirements: expect.any(Array) }]);
  });
});

describe("v1.0 -> v0.3", () => {
  const exported = exportCard(importedSpec(loadCard("v1_0-valid")), "0.3");

  it("is strictly valid v0.3", () => {
    expectStrict(exported, "0.3");
  });

  it("lists only interfaces below protocol version 1", () => {
    expect(exported).toMatchObject({ url: "https://routes.example.test/a2a/legacy", preferredTransport: "JSONRPC", protocolVersion: "0.3" });
    expect(exported["additionalInterfaces"]).toBeUndefined();
  });

  it("converts schemes back to the v0.3 form, and requirements", () => {
    expect(exported["securitySchemes"]).toEqual({
      sso: { type: "openIdConnect", openIdConnectUrl: "https://sso.northwind.example.test/.well-known/openid-configuration" },
      machine: { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://sso.northwind.example.test/token", scopes: { routes: "Plan routes" } } } },
      mesh: { type: "mutualTLS", description: "Service mesh identity" },
    });
    expect(exported["security"]).toEqual([{ sso: ["openid", "profile"] }, { machine: ["routes"] }]);
    expect(exported["supportsAuthenticatedExtendedCard"]).toBe(true);
    expect((exported["capabilities"] as any).extendedAgentCard).toBeUndefined();
  });

  it("falls back to the NATS subject when no interface speaks v0.3", () => {
    const card = loadCard("v1_0-valid");
    card["supportedInterfaces"].pop();
    const legacy = exportCard(importedSpec(card), "0.3");
    expect(legacy).toMatchObject({ url: "nats:agent.tasks.card-agent", preferredTransport: "NATS", protocolVersion: "0.3.0" });
    expectStrict(legacy, "0.3");
  });

  it("leaves out what v0.3 cannot say: an OAuth device code flow, an apiKey location of its own", () => {
    const card = loadCard("v1_0-valid");
    card["securitySchemes"] = {
      device: { oauth2SecurityScheme: { flows: { deviceCode: { deviceAuthorizationUrl: "https://d.test", tokenUrl: "https://t.test", scopes: {} } } } },
      odd: { apiKeySecurityScheme: { location: "body", name: "k" } },
      shouty: { apiKeySecurityScheme: { location: "HEADER", name: "k" } },
    };
    const legacy = exportCard(importedSpec(card), "0.3");
    expect(legacy["securitySchemes"]).toEqual({ device: { type: "oauth2", flows: {} }, shouty: { type: "apiKey", in: "header", name: "k" } });
    expectStrict(legacy, "0.3");
  });
});

describe("fixing what strict needs", () => {
  it("adds empty tags to skills without them", () => {
    const exported = exportCard(importedSpec(loadCard("skills-without-tags")), "0.3");
    expect((exported["skills"] as any[]).map((s) => s.tags)).toEqual([[], []]);
    expectStrict(exported, "0.3");
  });

  it('adds protocolVersion "0.3.0" to a legacy card, keeping its url, and drops fields no version has', () => {
    const exported = exportCard(importedSpec(loadCard("legacy-no-protocol-version")), "0.3");
    expect(exported).toMatchObject({ protocolVersion: "0.3.0", url: "http://weather.internal:8080/", preferredTransport: "JSONRPC", version: "1.0" });
    expect(exported["authentication"]).toBeUndefined();
    expectStrict(exported, "0.3");
  });

  it("reads a hybrid card by its v1.0 fields only", () => {
    const exported = exportCard(importedSpec(loadCard("hybrid")), "1.0");
    expect(exported["supportedInterfaces"]).toEqual(loadCard("hybrid")["supportedInterfaces"]);
    expect(exported["securitySchemes"]).toBeUndefined();
    expectStrict(exported, "1.0");
  });

  it("keeps modes that are not MIME types: they are strings, as the schema asks", () => {
    const exported = exportCard(importedSpec(loadCard("text-modes")), "1.0");
    expect(exported["defaultInputModes"]).toEqual(["text", "file"]);
    expect((exported["skills"] as any[])[0].inputModes).toEqual(["text", "data"]);
  });

  it("renders any stored a2a_card, however broken, as a valid card", () => {
    const junk = [{ skills: 5, supportedInterfaces: "x", capabilities: [], securitySchemes: { a: 1 }, provider: { organization: 3 } }, { url: 7, protocolVersion: 0.3, additionalInterfaces: [{}] }, {}];
    for (const a2a_card of junk) for (const version of ["1.0", "0.3"] as const) expectStrict(exportCard(plainSpec({ a2a_card }), version), version);
  });
});

describe("a spec registered without a card", () => {
  it("becomes a v1.0 card of its url and NATS subject, its capabilities as skills", () => {
    const exported = exportCard(plainSpec({ url: "https://pricing.test/a2a", display_name: "Pricing" }), "1.0");
    expectStrict(exported, "1.0");
    expect(exported).toEqual({
      name: "Pricing",
      description: "Prices baskets",
      version: "1.4.0",
      supportedInterfaces: [
        { url: "https://pricing.test/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: "nats:agent.tasks.pricing", protocolBinding: "NATS", protocolVersion: "1.0" },
      ],
      capabilities: {},
      defaultInputModes: ["application/json"],
      defaultOutputModes: ["application/json"],
      skills: [
        { id: "price.quote", name: "price.quote", description: "Quotes a basket", tags: ["pricing"], examples: ["quote 3 apples"], inputSchema: { type: "object", properties: { items: { type: "array" } } } },
        { id: "price.history", name: "Price history", description: "Past prices", tags: [] },
      ],
    });
  });

  it("becomes a v0.3 card whose url is the first interface and which lists both", () => {
    const exported = exportCard(plainSpec({ url: "https://pricing.test/a2a" }), "0.3");
    expectStrict(exported, "0.3");
    expect(exported).toMatchObject({
      name: "pricing",
      url: "https://pricing.test/a2a",
      preferredTransport: "JSONRPC",
      protocolVersion: "0.3.0",
      additionalInterfaces: [
        { url: "https://pricing.test/a2a", transport: "JSONRPC" },
        { url: "nats:agent.tasks.pricing", transport: "NATS" },
      ],
    });
  });

  it("declares its dependencies in an sbom extension", () => {
    const depends = [{ type: "tool" as const, name: "fx-rates", version: "2.0.0" }, { type: "agent" as const, name: "tax", version: "1.0.0", capability: "tax.rate" }];
    const exported = exportCard(plainSpec({ depends }), "1.0");
    expect((exported["capabilities"] as any).extensions).toEqual([
      {
        uri: "urn:agentgateway:sbom",
        description: "Software bill of materials: the tools and agents this agent depends on",
        required: false,
        params: { depends: [{ type: "tool", name: "fx-rates", version: "2.0.0" }, { type: "agent", name: "tax", version: "1.0.0", skill: "tax.rate" }] },
      },
    ]);
    expect(importedSpec(exported).depends).toEqual(depends);
  });
});

describe("every export", () => {
  it("is strict, has no liveness, and is the caller's own object", () => {
    for (const name of CARD_FIXTURES) {
      const spec = importedSpec(loadCard(name));
      for (const version of ["1.0", "0.3"] as const) {
        const exported = exportCard(spec, version);
        expectStrict(exported, version);
        expect(JSON.stringify(exported)).not.toMatch(/"(status|instances|last_heartbeat|registered_at)"/);
        (exported["skills"] as any[]).length = 0;
        expect(spec.capabilities.length).toBeGreaterThan(0);
      }
    }
  });
});
