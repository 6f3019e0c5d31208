/**
 * The three forms of a register body (domain/interop/register-body.ts): exactly one of spec,
 * a2a_card, mcp_toolspec; the completing fields only beside a card or tool spec; and a spec
 * built from a card that the spec rules refuse answered as invalid_card at the card's paths.
 */
import { describe, expect, it } from "vitest";
import { asCardError, specOfRegisterBody, specSourceOf } from "../../../../src/domain/interop/register-body.js";
import { invalidSpec, RegistryError } from "../../../../src/domain/errors.js";
import { loadCard } from "../../a2a-fixtures.js";

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return e instanceof RegistryError ? `${e.code} ${e.issues?.map((i) => i.path).join(",") ?? ""}`.trim() : String(e);
  }
};

describe("specOfRegisterBody", () => {
  it("takes a spec as it is, and a card or tool spec as the spec it builds", () => {
    expect(specOfRegisterBody("a", { spec: { agent_type: "a" } })).toEqual({ raw: { agent_type: "a" }, warnings: [], source: "spec" });
    const card = specOfRegisterBody("inv", { a2a_card: loadCard("v0_3-valid"), owner_team: "finance" });
    expect(card.source).toBe("a2a_card");
    expect(card.a2aVersion).toBe("0.3");
    expect(card.raw).toMatchObject({ agent_type: "inv", owner_team: "finance", nats_subject: "agent.tasks.inv" });
    const tools = specOfRegisterBody("t", { mcp_toolspec: { tools: [{ name: "Get_It", inputSchema: { type: "object" } }] }, description: "d", version: "1.0.0" });
    expect(tools.raw).toMatchObject({ kind: "mcp_server", capabilities: [{ name: "Get_It" }] });
  });

  it("refuses none or several forms, completing fields beside a spec, and another agent_type", () => {
    expect(codeOf(() => specOfRegisterBody("a", {}))).toBe("invalid_request spec");
    expect(codeOf(() => specOfRegisterBody("a", { spec: {}, mcp_toolspec: {} }))).toBe("invalid_request mcp_toolspec");
    expect(codeOf(() => specOfRegisterBody("a", { spec: {}, owner_team: "x" }))).toBe("invalid_request owner_team");
    expect(codeOf(() => specOfRegisterBody("a", { a2a_card: loadCard("v1_0-valid"), url: "http://x" }))).toBe("invalid_request url");
    expect(codeOf(() => specOfRegisterBody("a", { spec: { agent_type: "b" } }))).toBe("invalid_request spec.agent_type");
    expect(codeOf(() => specOfRegisterBody("a", { agent_type: "b", a2a_card: loadCard("v1_0-valid") }))).toBe("invalid_request agent_type");
    expect(codeOf(() => specOfRegisterBody("a", { a2a_card: loadCard("v1_0-valid"), strict: "yes" }))).toBe("invalid_request strict");
  });

  it("names the form of a document, or none", () => {
    expect(specSourceOf({ a2a_card: {} })).toBe("a2a_card");
    expect(specSourceOf({ spec: {}, a2a_card: {} })).toBeNull();
    expect(specSourceOf({ name: "x" })).toBeNull();
  });
});

describe("asCardError", () => {
  it("moves the spec rules' paths to the card's skill and the tool spec's tool", () => {
    const card = loadCard("v1_0-valid");
    const raw = { capabilities: card.skills.map((s: { id: string }) => ({ name: s.id })) };
    const e = asCardError(invalidSpec("spec is invalid", [{ path: "capabilities.1.input_schema.properties.q", message: "bad" }]), "a2a_card", { a2a_card: card }, raw) as RegistryError;
    expect(e.code).toBe("invalid_card");
    expect(e.issues).toEqual([{ path: "a2a_card.skills.1.inputSchema.properties.q", message: "bad" }]);
    const t = asCardError(invalidSpec("spec is invalid", [{ path: "capabilities.0.output_schema", message: "bad" }, { path: "nats_subject", message: "taken" }]), "mcp_toolspec", {}, {}) as RegistryError;
    expect(t.issues?.map((i) => i.path)).toEqual(["mcp_toolspec.tools.0.outputSchema", "nats_subject"]);
  });

  it("leaves a spec's errors and other errors alone", () => {
    const e = invalidSpec("x", [{ path: "capabilities.0.name", message: "m" }]);
    expect(asCardError(e, "spec", {}, {})).toBe(e);
    const other = new Error("boom");
    expect(asCardError(other, "a2a_card", {}, {})).toBe(other);
  });
});
