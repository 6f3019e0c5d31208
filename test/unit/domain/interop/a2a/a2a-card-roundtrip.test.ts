/**
 * Properties of import and export together, over generated specs and cards:
 *   - every exported card validates strictly against its version, with no field it does not define;
 *   - export -> import (strict) -> export gives the same card, for both versions;
 *   - card -> import -> export (to either version) keeps what the card said about skills (tags,
 *     examples, modes), provider and extensions.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkCardSchema, exportCard, importCard, type A2aVersion } from "../../../../../src/domain/interop/a2a/index.js";
import { fieldAdvice } from "../../../../../src/domain/interop/a2a/card-advice.js";
import { parseSpec } from "../../../../../src/domain/spec/validation.js";
import type { AgentSpec } from "../../../../../src/domain/spec/spec.js";
import { CARD_FIXTURES, loadCard } from "../../../a2a-fixtures.js";

const RUNS = 150;
const versions = fc.constantFrom<A2aVersion>("1.0", "0.3");

const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);
const capabilityName = fc.array(token, { minLength: 1, maxLength: 3 }).map((t) => t.join("."));
const agentType = fc.stringMatching(/^[a-z0-9]([a-z0-9_-]{0,10}[a-z0-9])?$/);
const semver = fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)).map(([a, b, c]) => `${a}.${b}.${c}`);
const cardVersion = fc.oneof(semver, fc.nat(9).map((n) => `${n}.0`), fc.nat(9).map((n) => `v${n}`));
const text = fc.string({ minLength: 1, maxLength: 24 }).filter((s) => s.trim() !== "");
const schema = fc.constantFrom<Record<string, unknown>>({}, { type: "object", properties: { q: { type: "string" } } }, { type: "string", maxLength: 5 });
const mode = fc.constantFrom("text", "text/plain", "application/json", "image/png");
const url = fc.webUrl();

const capability = fc.record(
  {
    name: capabilityName,
    description: fc.string({ maxLength: 30 }),
    input_schema: schema,
    output_schema: schema,
    tags: fc.array(text, { maxLength: 4 }),
    examples: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
    title: fc.string({ maxLength: 12 }),
  },
  { requiredKeys: ["name", "description", "input_schema", "output_schema", "tags", "examples"] },
);
const dependency = fc.record(
  { type: fc.constantFrom("agent" as const, "tool" as const), name: text, version: semver, capability: capabilityName },
  { requiredKeys: ["type", "name", "version"] },
);
/** What may sit in a spec's a2a_card: nothing, a fixture (its skills unrelated to the spec), or junk. */
const storedCard = fc.oneof(fc.constant(undefined), fc.constantFrom(...CARD_FIXTURES).map(loadCard), fc.object({ maxDepth: 2 }));

const plainSpec: fc.Arbitrary<AgentSpec> = fc
  .record({
    agent_type: agentType,
    version: semver,
    description: fc.string({ maxLength: 30 }),
    capabilities: fc.uniqueArray(capability, { minLength: 1, maxLength: 4, selector: (c) => c.name }),
    url: fc.option(url, { nil: undefined }),
    display_name: fc.option(text, { nil: undefined }),
    depends: fc.option(fc.array(dependency, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    a2a_card: storedCard,
  })
  .map((s) => parseSpec({ ...s, owner_team: "team", nats_subject: `agent.tasks.${s.agent_type}`, consumer_group: s.agent_type }));

const skill = fc.record(
  {
    id: capabilityName,
    name: text,
    description: fc.string({ maxLength: 30 }),
    tags: fc.array(text, { maxLength: 4 }),
    examples: fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
    inputModes: fc.array(mode, { maxLength: 3 }),
    outputModes: fc.array(mode, { maxLength: 3 }),
    inputSchema: schema,
  },
  { requiredKeys: ["id", "name"] },
);
const extension = fc.record({ uri: url, description: fc.string({ maxLength: 20 }), required: fc.boolean(), params: fc.dictionary(token, fc.oneof(fc.string(), fc.integer())) }, { requiredKeys: ["uri"] });
const provider = fc.record({ organization: text, url });

/** Cards as agents publish them: the required fields there, the rest maybe; skills maybe without tags. */
const generatedCard = (version: A2aVersion) =>
  fc
    .record(
      {
        name: text,
        description: text,
        version: cardVersion,
        provider,
        defaultInputModes: fc.array(mode, { minLength: 1, maxLength: 3 }),
        defaultOutputModes: fc.array(mode, { minLength: 1, maxLength: 3 }),
        skills: fc.uniqueArray(skill, { minLength: 1, maxLength: 4, selector: (s) => s.id }),
        capabilities: fc.record({ streaming: fc.boolean(), extensions: fc.array(extension, { maxLength: 2 }) }, { requiredKeys: [] }),
        url,
        protocolVersion: fc.constantFrom("0.3.0", "0.3"),
        interfaces: fc.array(fc.record({ url, protocolBinding: fc.constantFrom("JSONRPC", "GRPC", "HTTP+JSON"), protocolVersion: fc.constantFrom("1.0", "0.3") }), { minLength: 1, maxLength: 3 }),
      },
      { requiredKeys: ["name", "description", "version", "skills", "url", "interfaces"] },
    )
    .map(({ url: u, protocolVersion, interfaces, ...card }) =>
      version === "0.3" ? { ...card, url: u, ...(protocolVersion === undefined ? {} : { protocolVersion }) } : { ...card, supportedInterfaces: interfaces },
    );

const importedSpec = fc.tuple(versions, fc.constantFrom("card-agent", "x1")).chain(([version, agent_type]) =>
  generatedCard(version).map((card) => parseSpec(importCard(card, { agent_type }).spec)),
);

function expectStrict(card: Record<string, unknown>, version: A2aVersion): void {
  expect(checkCardSchema(card, version)).toEqual([]);
  expect(fieldAdvice(card, version)).toEqual([]);
}

describe("export", () => {
  it("validates strictly, for any spec and either version", () => {
    fc.assert(
      fc.property(fc.oneof(plainSpec, importedSpec), versions, (spec, version) => {
        expectStrict(exportCard(spec, version), version);
      }),
      { numRuns: RUNS },
    );
  });

  it("export -> import -> export is stable, for both versions", () => {
    fc.assert(
      fc.property(fc.oneof(plainSpec, importedSpec), versions, (spec, version) => {
        const card = exportCard(spec, version);
        const again = importCard(card, { agent_type: spec.agent_type, nats_subject: spec.nats_subject, consumer_group: spec.consumer_group, strict: true });
        expect(again.a2aVersion).toBe(version);
        const respec = parseSpec(again.spec);
        const routed = (caps: AgentSpec["capabilities"]) => caps.map((c) => [c.name, c.tags, c.examples, c.input_schema, c.output_schema]);
        expect(routed(respec.capabilities)).toEqual(routed(spec.capabilities));
        expect(exportCard(respec, version)).toEqual(card);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("card -> import -> export", () => {
  it("keeps skills, tags, examples, modes, provider and extensions, whichever version it is exported as", () => {
    fc.assert(
      fc.property(
        versions.chain((source) => generatedCard(source)),
        versions,
        (card, version) => {
          const spec = parseSpec(importCard(card, { agent_type: "card-agent" }).spec);
          const exported = exportCard(spec, version);
          expectStrict(exported, version);
          expect(exported["provider"]).toEqual(card["provider"]);
          expect((exported["capabilities"] as Record<string, unknown>)["extensions"] ?? []).toEqual(card.capabilities?.extensions ?? []);
          const skills = exported["skills"] as Array<Record<string, unknown>>;
          expect(skills.map((s) => s["id"])).toEqual(card.skills.map((s) => s.id));
          card.skills.forEach((s, i) => {
            expect(skills[i]).toMatchObject({ name: s.name, tags: s.tags ?? [], ...(s.examples ? { examples: s.examples } : {}), ...(s.inputModes ? { inputModes: s.inputModes } : {}), ...(s.outputModes ? { outputModes: s.outputModes } : {}) });
            expect(skills[i]?.["description"]).toBe(s.description ?? s.name);
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("keeps them for every fixture too, in both directions between versions", () => {
    for (const name of CARD_FIXTURES) {
      const card = loadCard(name);
      const spec = parseSpec(importCard(card, { agent_type: "card-agent" }).spec);
      for (const version of ["1.0", "0.3"] as const) {
        const exported = exportCard(spec, version);
        expectStrict(exported, version);
        const skills = exported["skills"] as Array<Record<string, unknown>>;
        (card["skills"] as Array<Record<string, unknown>>).forEach((s, i) => {
          for (const field of ["id", "name", "examples", "inputModes", "outputModes"]) expect(skills[i]?.[field]).toEqual(s[field]);
          expect(skills[i]?.["tags"]).toEqual(s["tags"] ?? []);
        });
        if (card["provider"]) expect(exported["provider"]).toEqual(card["provider"]);
        expect((exported["capabilities"] as any).extensions).toEqual(card["capabilities"].extensions);
      }
    }
  });
});
