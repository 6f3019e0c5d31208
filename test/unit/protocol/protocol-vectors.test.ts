/**
 * protocol/vectors/ against the domain: every spec, card, tool spec and server.json vector goes through the
 * register path the service runs (registerMessage, specOfRegisterBody, the AgentSpec rules,
 * asCardError), and every spec vector through protocol/agentspec.schema.json with ajv, so a
 * vector the validator and the published schema judge differently fails here.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { isRegistryError } from "../../../src/domain/errors.js";
import { asCardError, specOfRegisterBody } from "../../../src/domain/interop/register-body.js";
import { SchemaChecker } from "../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../src/domain/spec/validation.js";
import { parseMessage, registerMessage } from "../../../src/domain/messages.js";
import { cardVectors, serverVectors, specVectors, subsetMismatch, toolspecVectors, warningPaths, type SpecLikeVector } from "../protocol-vectors.js";

const checker = new SchemaChecker();

type Outcome = { ok: true; spec: Record<string, unknown>; warnings: string[] } | { ok: false; code: string; paths: string[] };

/** A register body judged as the registry's register endpoint judges it, short of the store. */
function register(agentType: string, body: Record<string, unknown>): Outcome {
  try {
    const msg = parseMessage(registerMessage, body, "register");
    const taken = specOfRegisterBody(agentType, msg);
    try {
      const { spec, warnings } = validateSpec(taken.raw, checker);
      return { ok: true, spec, warnings: [...taken.warnings, ...warnings] };
    } catch (e) {
      throw asCardError(e, taken.source, msg, taken.raw);
    }
  } catch (e) {
    if (!isRegistryError(e)) throw e;
    return { ok: false, code: e.code, paths: (e.issues ?? []).map((i) => i.path) };
  }
}

/** What a vector expects of an outcome; the issue paths compare as sets. */
function expectOutcome(v: SpecLikeVector, outcome: Outcome, expected = { code: v.code, paths: v.paths }): void {
  if (v.valid) {
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ ok: true });
    if (!outcome.ok) return;
    expect(subsetMismatch(v.expect ?? {}, outcome.spec)).toBeNull();
    if (v.warnings) expect(warningPaths(outcome.warnings)).toEqual(v.warnings);
    return;
  }
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  expect(outcome.code).toBe(expected.code);
  expect([...new Set(outcome.paths)].sort(), `issue paths ${JSON.stringify(outcome.paths)}`).toEqual([...(expected.paths ?? [])].sort());
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
const agentSpecSchema = ajv.compile(JSON.parse(readFileSync(new URL("../../../protocol/agentspec.schema.json", import.meta.url), "utf8")) as object);

describe("spec vectors", () => {
  it.each(specVectors().map((v) => [v.name, v] as const))("%s: the AgentSpec rules", (_name, v) => {
    const subject = typeof v.spec["agent_type"] === "string" ? v.spec["agent_type"] : "";
    // The validator alone: the model every client checks its own models against.
    expectOutcome(v, register(subject, { spec: v.spec }));
  });

  it.each(specVectors().map((v) => [v.name, v] as const))("%s: agentspec.schema.json", (_name, v) => {
    const accepted = agentSpecSchema(v.spec);
    expect(accepted, JSON.stringify(agentSpecSchema.errors)).toBe(v.valid || v.schema_valid === true);
  });

  it("names are unique and every invalid vector names its code and at least one path", () => {
    const vectors = specVectors();
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    for (const v of vectors.filter((x) => !x.valid)) {
      expect(v.code, v.name).toBe("invalid_spec");
      expect(v.paths?.length, v.name).toBeGreaterThan(0);
      expect(typeof v.schema_valid, v.name).toBe("boolean");
    }
  });
});

describe("card vectors", () => {
  it.each(cardVectors().map((v) => [v.name, v] as const))("%s", (_name, v) => {
    expectOutcome(v, register(v.agent_type!, { a2a_card: v.card, ...v.with }));
  });
});

describe("tool spec vectors", () => {
  it.each(toolspecVectors().map((v) => [v.name, v] as const))("%s", (_name, v) => {
    expectOutcome(v, register(v.agent_type!, { mcp_toolspec: v.toolspec, ...v.with }));
  });
});

describe("server.json vectors", () => {
  it.each(serverVectors().map((v) => [v.name, v] as const))("%s", (_name, v) => {
    expectOutcome(v, register(v.agent_type!, { mcp_server: v.server, ...v.with }));
  });
});
