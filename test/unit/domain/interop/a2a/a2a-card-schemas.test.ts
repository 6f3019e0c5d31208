/**
 * The A2A card schemas (src/domain/interop/a2a/schema-v0-3.ts, schema-v1-0.ts) and the check
 * that reports deviations at their paths. The `required` lists below are the facts the schemas
 * were written from: A2A v0.3.0 specification/json/a2a.json, and the fields marked REQUIRED in
 * A2A v1.0 specification/a2a.proto.
 */
import { Ajv } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { A2A_CARD_SCHEMA_V0_3, A2A_CARD_SCHEMA_V1_0, checkCardSchema } from "../../../../../src/domain/interop/a2a/index.js";
import { CARD_FIXTURES, loadCard } from "../../../a2a-fixtures.js";

const paths = (card: unknown, version: "0.3" | "1.0") => checkCardSchema(card, version).map((f) => f.path);

describe("the schemas hold the sources' facts", () => {
  it("v0.3.0: required fields of AgentCard, AgentSkill, AgentInterface, AgentProvider, AgentExtension", () => {
    const d = A2A_CARD_SCHEMA_V0_3.definitions;
    expect([...d.AgentCard.required].sort()).toEqual(["capabilities", "defaultInputModes", "defaultOutputModes", "description", "name", "protocolVersion", "skills", "url", "version"]);
    expect([...d.AgentSkill.required].sort()).toEqual(["description", "id", "name", "tags"]);
    expect([...d.AgentInterface.required].sort()).toEqual(["transport", "url"]);
    expect([...d.AgentProvider.required].sort()).toEqual(["organization", "url"]);
    expect([...d.AgentExtension.required]).toEqual(["uri"]);
    expect(d.APIKeySecurityScheme.properties.in.enum).toEqual(["cookie", "header", "query"]);
  });

  it("v1.0: the fields a2a.proto marks REQUIRED, under their JSON names", () => {
    const d = A2A_CARD_SCHEMA_V1_0.definitions;
    expect([...d.AgentCard.required].sort()).toEqual(["capabilities", "defaultInputModes", "defaultOutputModes", "description", "name", "skills", "supportedInterfaces", "version"]);
    expect([...d.AgentSkill.required].sort()).toEqual(["description", "id", "name", "tags"]);
    expect([...d.AgentInterface.required].sort()).toEqual(["protocolBinding", "protocolVersion", "url"]);
    expect([...d.AgentProvider.required].sort()).toEqual(["organization", "url"]);
    expect("required" in d.AgentExtension).toBe(false);
    expect([...d.APIKeySecurityScheme.required].sort()).toEqual(["location", "name"]);
    expect([...d.DeviceCodeOAuthFlow.required].sort()).toEqual(["deviceAuthorizationUrl", "scopes", "tokenUrl"]);
  });
});

describe("checkCardSchema", () => {
  it("finds nothing wrong with the strictly valid fixtures", () => {
    expect(checkCardSchema(loadCard("v0_3-valid"), "0.3")).toEqual([]);
    expect(checkCardSchema(loadCard("v1_0-valid"), "1.0")).toEqual([]);
    expect(checkCardSchema(loadCard("sbom"), "0.3")).toEqual([]);
  });

  it("names each deviation of the messy fixtures at its path", () => {
    expect(paths(loadCard("skills-without-tags"), "0.3")).toEqual(["skills.0.tags", "skills.1.tags"]);
    expect(paths(loadCard("legacy-no-protocol-version"), "0.3")).toEqual(["protocolVersion"]);
    // The hybrid card is valid v1.0: its v0.3 fields are extra, and objects are open.
    expect(paths(loadCard("hybrid"), "1.0")).toEqual(["securitySchemes.key"]);
  });

  it("says what a deviation is, naming the schema", () => {
    const card = loadCard("v0_3-valid");
    card["securitySchemes"].partner_key.in = "body";
    card["skills"][0].tags = "invoices";
    delete card["skills"][1].name;
    expect(checkCardSchema(card, "0.3")).toEqual([
      { path: "securitySchemes.partner_key.in", message: 'must be one of "cookie", "header", "query" (A2A v0.3.0)' },
      { path: "skills.0.tags", message: "must be an array (A2A v0.3.0)" },
      { path: "skills.1.name", message: "missing; A2A v0.3.0 requires it" },
    ]);
  });

  it("reports a v1.0 oneof set twice, or not at all, as one finding", () => {
    const card = loadCard("v1_0-valid");
    card["securitySchemes"].sso.mtlsSecurityScheme = {};
    card["securitySchemes"].machine.oauth2SecurityScheme.flows = {};
    expect(checkCardSchema(card, "1.0")).toEqual([
      { path: "securitySchemes.sso", message: expect.stringMatching(/^must set exactly one of apiKeySecurityScheme, httpAuthSecurityScheme, .* \(A2A v1.0\)$/) },
      { path: "securitySchemes.machine.oauth2SecurityScheme.flows", message: expect.stringMatching(/^must set exactly one of authorizationCode, clientCredentials, implicit, password, deviceCode/) },
    ]);
  });

  it("does not count fields the version does not define as deviations", () => {
    const card = { ...loadCard("v1_0-valid"), "x-owner": "ops", url: "https://old.test" };
    expect(checkCardSchema(card, "1.0")).toEqual([]);
  });

  it("checks every fixture without throwing, against both versions", () => {
    for (const name of CARD_FIXTURES) for (const version of ["0.3", "1.0"] as const) expect(Array.isArray(checkCardSchema(loadCard(name), version))).toBe(true);
  });
});

describe("the v0.3 SecurityScheme", () => {
  // The official schema's form: an anyOf of the five schemes. Ours applies them by `type`.
  const official = new Ajv({ strict: false }).compile({ ...A2A_CARD_SCHEMA_V0_3, $id: "official", $ref: undefined, anyOf: ["APIKeySecurityScheme", "HTTPAuthSecurityScheme", "OAuth2SecurityScheme", "OpenIdConnectSecurityScheme", "MutualTLSSecurityScheme"].map((n) => ({ $ref: `#/definitions/${n}` })) });
  const scheme = fc.record(
    {
      type: fc.constantFrom("apiKey", "http", "oauth2", "openIdConnect", "mutualTLS", "basic", 3),
      in: fc.constantFrom("header", "query", "cookie", "body"),
      name: fc.constantFrom("X-Key", 1),
      scheme: fc.constant("bearer"),
      flows: fc.constantFrom({}, { implicit: { authorizationUrl: "a", scopes: {} } }, { implicit: {} }),
      openIdConnectUrl: fc.constantFrom("https://o.test", null),
    },
    { requiredKeys: [] },
  );

  it("accepts exactly what the official anyOf accepts", () => {
    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(scheme, (s) => {
        const ours = checkCardSchema({ ...loadCard("v0_3-valid"), securitySchemes: { s } }, "0.3").length === 0;
        expect(ours).toBe(official(s));
        outcomes[ours ? "accepted" : "refused"]++;
      }),
      { numRuns: 500 },
    );
    // Both sides of the equivalence were exercised.
    expect(outcomes.accepted).toBeGreaterThan(20);
    expect(outcomes.refused).toBeGreaterThan(20);
  });
});
