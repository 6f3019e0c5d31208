/**
 * An A2A Agent Card (v0.3 or v1.0) as the raw AgentSpec input it registers as (PROTOCOL.md
 * section 10.1). Pure: the caller validates the result as any spec (validateSpec or the
 * service's parseSpec/finishSpec, which compile the skills' schemas) and stores it.
 *
 * Steps, each refusing with `invalid_card` and `issues` at paths under `a2a_card`:
 *   1. bounds (card-limits.ts) and at most 256 skills: always refused past them;
 *   2. the version is detected as the A2A JS SDK does (detect-version.ts) and the card checked
 *      against that version's schema (card-check.ts): under `strict` any deviation is refused,
 *      otherwise each one becomes a warning `a2a_card.<path>: <message>`;
 *   3. what the registry needs whatever the mode: non-empty `name`, `description`, `version`
 *      (semver, or a short form completed with a warning: card-version.ts), at least one skill
 *      with a string `id` and `name`, every such `id` a capability name and unique;
 *   4. the mapping below; a value the AgentSpec refuses (a description over its limit, a
 *      skill schema that is not a schema) is refused at the card path it came from.
 * Warnings also carry card-advice.ts (fields of the other version or of neither, modes that
 * are not MIME types) in both modes, and whatever the mapping left out; at most 20 are listed,
 * then one line counting the rest.
 *
 * Mapping (options are the register body's overrides):
 *   agent_type     = options.agent_type (the subject's)
 *   version        = card.version (completed to semver when short)
 *   description    = card.description
 *   display_name   = card.name
 *   capabilities   = one per skill with an id and a name (skill-capability.ts)
 *   url            = card.url (v0.3), or supportedInterfaces[0].url (v1.0); none when absent
 *   owner_team     = options.owner_team, else card.provider.organization, else "unknown"
 *   nats_subject   = options.nats_subject, else `agent.tasks.<agent_type>`
 *   consumer_group = options.consumer_group, else agent_type
 *   tenant_scope   = options.tenant_scope (when given)
 *   depends        = the `urn:agentgateway:sbom` extension's entries (sbom-extension.ts)
 *   kind           = "agent"
 *   representative_queries = the skills' examples (v1.2): the first 5 distinct ones of at most
 *                    512 characters, when there are at least 2 (representative-queries.ts)
 *   a2a_card       = the card, verbatim (the same object)
 */
import { describeIssues } from "../../spec/validation.js";
import { agentSpecSchema, capabilityName, isPlainObject, type AgentSpecInput } from "../../spec/spec.js";
import { invalidCard, type ErrorIssue, type RegistryError } from "../../errors.js";
import { detectA2aVersion, type A2aVersion } from "./detect-version.js";
import { checkCardLimits } from "./card-limits.js";
import { queriesFromExamples } from "../../spec/representative-queries.js";
import { checkCardSchema, SCHEMA_LABEL, type CardFinding } from "./card-check.js";
import { cardAdvice } from "./card-advice.js";
import { completeVersion } from "../../spec/version-completion.js";
import { skillToCapability } from "./skill-capability.js";
import { cardDependencies } from "./sbom-extension.js";

export type ImportCardOptions = {
  /** The agent_type of the register subject. */
  agent_type: string;
  /** Refuse any deviation from the card's A2A schema instead of warning about it. */
  strict?: boolean | undefined;
  nats_subject?: string | undefined;
  consumer_group?: string | undefined;
  owner_team?: string | undefined;
  tenant_scope?: string | null | undefined;
};

export type ImportedCard = {
  /** Raw AgentSpec input: validate it as any spec before storing it. */
  spec: AgentSpecInput;
  /** `a2a_card.<path>: <message>`, at most MAX_CARD_WARNINGS lines and one counting the rest. */
  warnings: string[];
  a2aVersion: A2aVersion;
};

/** As many skills as a spec may have capabilities. */
export const MAX_CARD_SKILLS = 256;
export const MAX_CARD_WARNINGS = 20;
export const MAX_CARD_ISSUES = 20;
export const DEFAULT_OWNER_TEAM = "unknown";

const CARD = "a2a_card";
const inCard = (path: string): string => (path ? `${CARD}.${path}` : CARD);

export function importCard(card: unknown, options: ImportCardOptions): ImportedCard {
  if (!isPlainObject(card)) throw refuse("a2a_card must be a JSON object", [{ path: "", message: "expected an object" }]);
  const limit = checkCardLimits(card);
  if (limit) throw refuse(`a2a_card is over a limit: ${limit.message}`, [limit]);
  const rawSkills = card["skills"];
  if (Array.isArray(rawSkills) && rawSkills.length > MAX_CARD_SKILLS) {
    throw refuse("a2a_card has too many skills", [{ path: "skills", message: `${rawSkills.length} skills; the limit is ${MAX_CARD_SKILLS} (one capability each)` }]);
  }

  const a2aVersion = detectA2aVersion(card);
  const deviations = checkCardSchema(card, a2aVersion);
  if (options.strict && deviations.length > 0) {
    throw refuse(`a2a_card does not conform to ${SCHEMA_LABEL[a2aVersion]} (strict)`, deviations);
  }

  const problems: CardFinding[] = [];
  const notes: CardFinding[] = [];
  for (const field of ["name", "description", "version"] as const) {
    const value = card[field];
    if (typeof value !== "string" || value.trim() === "") problems.push({ path: field, message: "the registry needs a non-empty string" });
  }
  const version = typeof card["version"] === "string" && card["version"].trim() !== "" ? completeVersion(card["version"]) : undefined;
  if (version === null) problems.push({ path: "version", message: `${JSON.stringify(card["version"])} is not a version the registry can use: semver X.Y.Z[-prerelease], or a short form such as 1.0 or v2` });
  else if (version?.completed) notes.push({ path: "version", message: `${JSON.stringify(card["version"])} is not semver; registered as ${version.version}` });

  const usable = usableSkills(rawSkills, problems, notes);
  if (problems.length > 0) throw refuse("a2a_card cannot be registered", problems);

  const capabilities = usable.map(({ skill, index }) => {
    const { capability, dropped } = skillToCapability(skill);
    for (const d of dropped) notes.push({ path: `skills.${index}.${d.path}`, message: d.message });
    return capability;
  });
  const { depends, dropped } = cardDependencies(card);
  notes.push(...dropped);

  const provider = card["provider"];
  const organization = isPlainObject(provider) && typeof provider["organization"] === "string" && provider["organization"] !== "" ? provider["organization"] : undefined;
  const url = cardUrl(card, a2aVersion);
  const { agent_type } = options;
  const spec: AgentSpecInput = {
    agent_type,
    version: version!.version,
    description: card["description"] as string,
    owner_team: options.owner_team ?? organization ?? DEFAULT_OWNER_TEAM,
    capabilities,
    nats_subject: options.nats_subject ?? `agent.tasks.${agent_type}`,
    consumer_group: options.consumer_group ?? agent_type,
    kind: "agent",
    display_name: card["name"] as string,
    a2a_card: card,
    ...(url === undefined ? {} : { url }),
    ...(depends.length > 0 ? { depends } : {}),
    ...queriesFromExamples(capabilities.flatMap((c) => c.examples ?? [])),
    ...(options.tenant_scope === undefined ? {} : { tenant_scope: options.tenant_scope }),
  };

  const refused = specProblems(spec, { a2aVersion, skillIndex: usable.map((s) => s.index), ownerFromCard: options.owner_team === undefined && organization !== undefined });
  if (refused.length > 0) throw refuse("a2a_card cannot be registered", refused);

  const findings = [...(options.strict ? [] : deviations), ...cardAdvice(card, a2aVersion), ...notes];
  const warnings = findings.slice(0, MAX_CARD_WARNINGS).map((f) => `${inCard(f.path)}: ${f.message}`);
  if (findings.length > MAX_CARD_WARNINGS) warnings.push(`and ${findings.length - MAX_CARD_WARNINGS} more warnings about a2a_card`);
  return { spec, warnings, a2aVersion };
}

type UsableSkill = { skill: Record<string, unknown>; index: number };

/**
 * The skills that become capabilities: those with a string id and a non-empty name. Others
 * are left out with a note (their schema deviation is reported too); an id that is not a
 * capability name, or used twice, refuses the card; so does having no usable skill.
 */
function usableSkills(raw: unknown, problems: CardFinding[], notes: CardFinding[]): UsableSkill[] {
  const usable: UsableSkill[] = [];
  const none = { path: "skills", message: "the registry needs at least one skill with an id and a name" };
  if (!Array.isArray(raw)) {
    problems.push(none);
    return usable;
  }
  const seen = new Map<string, number>();
  raw.forEach((skill: unknown, index) => {
    const id = isPlainObject(skill) ? skill["id"] : undefined;
    const name = isPlainObject(skill) ? skill["name"] : undefined;
    if (!isPlainObject(skill) || typeof id !== "string" || typeof name !== "string" || name.trim() === "") {
      notes.push({ path: `skills.${index}`, message: "no capability made from this skill: it needs a string id and a non-empty name" });
      return;
    }
    const bad = capabilityName.safeParse(id);
    if (!bad.success) {
      problems.push({ path: `skills.${index}.id`, message: `${JSON.stringify(id.slice(0, 64))} is not a capability name: ${bad.error.issues[0]?.message ?? "invalid"}` });
      return;
    }
    const first = seen.get(id);
    if (first !== undefined) {
      problems.push({ path: `skills.${index}.id`, message: `duplicate skill id "${id}" (also skills.${first}): capability names are unique` });
      return;
    }
    seen.set(id, index);
    usable.push({ skill, index });
  });
  if (usable.length === 0) problems.push(none);
  return usable;
}

function cardUrl(card: Record<string, unknown>, version: A2aVersion): string | undefined {
  const first = Array.isArray(card["supportedInterfaces"]) ? card["supportedInterfaces"][0] : undefined;
  const url = version === "0.3" ? card["url"] : isPlainObject(first) ? first["url"] : undefined;
  return typeof url === "string" && url !== "" ? url : undefined;
}

type Origins = { a2aVersion: A2aVersion; skillIndex: number[]; ownerFromCard: boolean };

/** AgentSpec rules the mapped card breaks, at the card paths the values came from. Values from the body are left to the spec's own validation. */
function specProblems(spec: AgentSpecInput, origins: Origins): CardFinding[] {
  const parsed = agentSpecSchema.safeParse(spec);
  if (parsed.success) return [];
  const findings: CardFinding[] = [];
  for (const issue of parsed.error.issues) {
    const path = cardPathOf(issue.path.map(String), origins);
    if (path !== null) findings.push({ path, message: issue.message });
  }
  return findings;
}

const CAPABILITY_SOURCE: Readonly<Record<string, string>> = { name: "id", input_schema: "inputSchema", output_schema: "outputSchema" };

function cardPathOf([head, ...rest]: string[], origins: Origins): string | null {
  const tail = rest.length > 0 ? `.${rest.join(".")}` : "";
  switch (head) {
    case "display_name":
      return `name${tail}`;
    case "description":
    case "version":
      return `${head}${tail}`;
    case "url":
      return origins.a2aVersion === "0.3" ? "url" : "supportedInterfaces.0.url";
    case "owner_team":
      return origins.ownerFromCard ? "provider.organization" : null;
    case "depends":
      return "capabilities.extensions";
    case "capabilities": {
      const [index, field, ...more] = rest;
      const skill = index === undefined ? undefined : origins.skillIndex[Number(index)];
      if (skill === undefined) return "skills";
      const source = field === undefined ? "" : `.${CAPABILITY_SOURCE[field] ?? field}`;
      return `skills.${skill}${source}${more.map((p) => `.${p}`).join("")}`;
    }
    default:
      return null;
  }
}

function refuse(message: string, findings: readonly CardFinding[]): RegistryError {
  const issues: ErrorIssue[] = findings.slice(0, MAX_CARD_ISSUES).map((f) => ({ path: inCard(f.path), message: f.message }));
  return invalidCard(`${message}: ${describeIssues(issues)}`, issues);
}
