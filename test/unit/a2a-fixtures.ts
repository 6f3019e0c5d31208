/**
 * The A2A Agent Cards of test/fixtures/a2a: made for these tests, shaped like public cards
 * (strictly valid v0.3 and v1.0, a legacy card without protocolVersion, a hybrid v0.3 + v1.0
 * card, skills without tags, bare "text" modes, a Registry v2 card with an sbom extension).
 */
import { readFileSync } from "node:fs";
import { parseSpec } from "../../src/domain/spec/validation.js";
import { importCard, type ImportCardOptions } from "../../src/domain/interop/a2a/index.js";
import type { AgentSpec } from "../../src/domain/spec/spec.js";

export const CARD_FIXTURES = ["v0_3-valid", "v1_0-valid", "legacy-no-protocol-version", "hybrid", "skills-without-tags", "text-modes", "sbom"] as const;
export type CardFixture = (typeof CARD_FIXTURES)[number];

/** A fresh copy of a fixture card each call, so a test may change it. */
export function loadCard(name: CardFixture): Record<string, any> {
  return JSON.parse(readFileSync(new URL(`../fixtures/a2a/${name}.json`, import.meta.url), "utf8")) as Record<string, any>;
}

/** A card imported leniently and parsed into the AgentSpec the registry would store. */
export function importedSpec(card: unknown, options: Partial<ImportCardOptions> = {}): AgentSpec {
  return parseSpec(importCard(card, { agent_type: "card-agent", ...options }).spec);
}
