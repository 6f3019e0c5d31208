/**
 * What a card says that its schema allows but that is probably a mistake, reported as
 * warnings in lenient and strict imports alike (strict refuses only schema deviations,
 * card-check.ts): a field of the other A2A version (a "hybrid" card), a field neither version
 * defines, a mode that is not a MIME type (`"text"`), a v0.3 card whose protocolVersion is not
 * a v0.3 one. The sets of known fields come from the two schemas, so they cannot drift.
 */
import { isPlainObject } from "../../spec/spec.js";
import { isLegacyProtocolVersion, type A2aVersion } from "./detect-version.js";
import { SCHEMA_LABEL, type CardFinding } from "./card-check.js";
import { A2A_CARD_SCHEMA_V0_3 } from "./schema-v0-3.js";
import { A2A_CARD_SCHEMA_V1_0 } from "./schema-v1-0.js";
import { REGISTRY_SKILL_FIELDS } from "./skill-capability.js";

type Definitions = { readonly [name: string]: { readonly properties?: object } };
const fieldsOf = (definitions: Definitions, name: string): ReadonlySet<string> => new Set(Object.keys(definitions[name]?.properties ?? {}));

/** For each part of a card that advice looks into: the fields each version defines there. */
const PARTS = ["AgentCard", "AgentCapabilities", "AgentSkill", "AgentProvider"] as const;
const KNOWN: Readonly<Record<A2aVersion, Readonly<Record<(typeof PARTS)[number], ReadonlySet<string>>>>> = {
  "0.3": Object.fromEntries(PARTS.map((part) => [part, fieldsOf(A2A_CARD_SCHEMA_V0_3.definitions, part)])) as Record<(typeof PARTS)[number], ReadonlySet<string>>,
  "1.0": Object.fromEntries(PARTS.map((part) => [part, fieldsOf(A2A_CARD_SCHEMA_V1_0.definitions, part)])) as Record<(typeof PARTS)[number], ReadonlySet<string>>,
};

const other = (version: A2aVersion): A2aVersion => (version === "1.0" ? "0.3" : "1.0");

/** Likely meanings of the bare words cards use as modes. */
const MODE_HINTS: Readonly<Record<string, string>> = { text: "text/plain", json: "application/json", data: "application/json", file: "application/octet-stream" };

/** Everything advice has to say about a card, in the order of the card. */
export function cardAdvice(card: Record<string, unknown>, version: A2aVersion): CardFinding[] {
  const findings = fieldAdvice(card, version);
  const modes = (value: unknown, path: string): void => {
    if (!Array.isArray(value)) return;
    value.forEach((mode, i) => {
      if (typeof mode !== "string" || mode.includes("/")) return;
      const hint = MODE_HINTS[mode.trim().toLowerCase()];
      findings.push({ path: `${path}.${i}`, message: `${JSON.stringify(mode)} is not a MIME type${hint ? ` (${hint} is meant?)` : " (type/subtype)"}` });
    });
  };
  modes(card["defaultInputModes"], "defaultInputModes");
  modes(card["defaultOutputModes"], "defaultOutputModes");
  const skills = card["skills"];
  if (Array.isArray(skills)) {
    skills.forEach((skill, i) => {
      if (!isPlainObject(skill)) return;
      modes(skill["inputModes"], `skills.${i}.inputModes`);
      modes(skill["outputModes"], `skills.${i}.outputModes`);
    });
  }
  const protocolVersion = card["protocolVersion"];
  if (version === "0.3" && typeof protocolVersion === "string" && !isLegacyProtocolVersion(protocolVersion)) {
    findings.push({ path: "protocolVersion", message: `${JSON.stringify(protocolVersion)} is not in [0.3, 1.0); the card is read as v0.3 by its other fields` });
  }
  return findings;
}

/**
 * Fields the card's version does not define, in the card, its capabilities, its provider and
 * its skills (where the Registry v2 `inputSchema`/`outputSchema` are known too). Export keeps a
 * card verbatim only when there are none.
 */
export function fieldAdvice(card: Record<string, unknown>, version: A2aVersion): CardFinding[] {
  const findings: CardFinding[] = [];
  const fields = (value: unknown, part: (typeof PARTS)[number], path: string, extra: ReadonlySet<string> = new Set()): void => {
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      if (KNOWN[version][part].has(key) || extra.has(key)) continue;
      const at = path ? `${path}.${key}` : key;
      findings.push(
        KNOWN[other(version)][part].has(key)
          ? { path: at, message: `a field of ${SCHEMA_LABEL[other(version)]}, not of ${SCHEMA_LABEL[version]} (this card is read as ${version}): kept in the card, not used` }
          : { path: at, message: `not a field of ${SCHEMA_LABEL[version]}: kept in the card, not used` },
      );
    }
  };
  fields(card, "AgentCard", "");
  fields(card["capabilities"], "AgentCapabilities", "capabilities");
  fields(card["provider"], "AgentProvider", "provider");
  const skills = card["skills"];
  if (Array.isArray(skills)) skills.forEach((skill, i) => fields(skill, "AgentSkill", `skills.${i}`, REGISTRY_SKILL_FIELDS));
  return findings;
}
