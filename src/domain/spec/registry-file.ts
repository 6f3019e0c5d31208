/**
 * The static registry file (A2A agent cards plus where each agent listens) and single
 * Checking only: reading and decoding the file (JSON or YAML, kit/documents.ts) and
 * registering its entries (instance_id `static`) happen at the edges and in the service.
 *
 * Mapping of one file entry to an AgentSpec (also in docs/registry-file.md):
 *   agent_type     = card.name (must already be a valid agent_type token: no case folding)
 *   version        = card.version
 *   description    = card.description
 *   owner_team     = card.provider.organization, else "static"
 *   capabilities   = card.skills, each as an A2A card import maps it (PROTOCOL.md section 10.1,
 *                    domain/interop/a2a/skill-capability.ts): name = skill.id, description =
 *                    skill.description, else skill.name; the tags and examples a capability can
 *                    hold; input_schema/output_schema = skill.inputSchema/outputSchema, else {}
 *   nats_subject   = queueSubject
 *   consumer_group = agent_type
 *   runtime        = runtime
 *   acp_port       = acpPort (when given)
 *   a2a_card       = the whole card, kept opaque
 */
import { AGENT_TYPE_RE, agentSpecSchema, isPlainObject } from "./spec.js";
import type { AgentSpecInput } from "./spec.js";
import { skillToCapability } from "../interop/a2a/skill-capability.js";

export type RegistryFileResult = { ok: true; specs: AgentSpecInput[] } | { ok: false; errors: string[] };

export const DEFAULT_OWNER_TEAM = "static";

/** Where each AgentSpec field comes from in an entry, to report schema issues in the file's own terms. */
const FIELD_SOURCE: Readonly<Record<string, string>> = {
  agent_type: "card.name",
  version: "card.version",
  description: "card.description",
  capabilities: "card.skills",
  owner_team: "card.provider.organization",
  nats_subject: "queueSubject",
  consumer_group: "card.name",
  runtime: "runtime",
  acp_port: "acpPort",
  a2a_card: "card",
};
const SKILL_FIELD_SOURCE: Readonly<Record<string, string>> = {
  name: "id",
  description: "description",
  tags: "tags",
  examples: "examples",
  input_schema: "inputSchema",
  output_schema: "outputSchema",
};

/** The AgentSpec input of one entry that passed the structural checks of validateRegistryFile. */
export function registryEntryToSpec(entry: Record<string, unknown>): AgentSpecInput {
  const card = entry["card"] as Record<string, unknown>;
  const name = card["name"] as string;
  const provider = card["provider"];
  const org = isPlainObject(provider) ? provider["organization"] : undefined;
  const skills = card["skills"] as Record<string, unknown>[];
  const spec: AgentSpecInput = {
    agent_type: name,
    version: card["version"] as string,
    description: card["description"] as string,
    owner_team: typeof org === "string" && org.length > 0 ? org : DEFAULT_OWNER_TEAM,
    capabilities: skills.map((s) => skillToCapability(s).capability),
    nats_subject: entry["queueSubject"] as string,
    consumer_group: name,
    runtime: entry["runtime"] as string,
    a2a_card: card,
  };
  if (entry["acpPort"] !== undefined) spec.acp_port = entry["acpPort"] as number;
  return spec;
}

const isNonEmptyString = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/**
 * Checks a parsed registry file and maps its entries to AgentSpec inputs. Every broken
 * rule is reported (not just the first) as `agents[i] (name): <rule>`, so an operator can
 * fix the whole file in one pass. Specs are returned only when there is no error at all:
 * a half-loaded registry would silently drop agents.
 */
export function validateRegistryFile(raw: unknown): RegistryFileResult {
  if (!isPlainObject(raw) || !Array.isArray(raw["agents"])) {
    return { ok: false, errors: ['registry file: must be an object with an "agents" array'] };
  }
  const errors: string[] = [];
  const specs: AgentSpecInput[] = [];
  const names = new Map<string, string>();
  const subjects = new Map<string, string>();

  raw["agents"].forEach((entry: unknown, i) => {
    const card = isPlainObject(entry) ? entry["card"] : undefined;
    const cardName = isPlainObject(card) ? card["name"] : undefined;
    const where = isNonEmptyString(cardName) ? `agents[${i}] (${cardName})` : `agents[${i}]`;
    const before = errors.length;
    const fail = (rule: string): void => {
      errors.push(`${where}: ${rule}`);
    };
    if (!isPlainObject(entry)) return fail("entry must be an object");
    if (!isPlainObject(card)) return fail("missing required field card");

    for (const field of ["name", "description", "version"]) {
      if (!isNonEmptyString(card[field])) fail(`missing required field card.${field} (a non-empty string)`);
    }
    for (const field of ["queueSubject", "runtime"]) {
      if (!isNonEmptyString(entry[field])) fail(`missing required field ${field} (a non-empty string)`);
    }
    if (isNonEmptyString(cardName)) {
      if (!AGENT_TYPE_RE.test(cardName)) {
        fail(`card.name "${cardName}" is not a valid agent_type (lower-case letters, digits, "_" and "-", 1..128 characters)`);
      }
      const first = names.get(cardName);
      if (first !== undefined) fail(`duplicate agent name "${cardName}" (first used by ${first})`);
      else names.set(cardName, `agents[${i}]`);
    }
    const subject = entry["queueSubject"];
    if (isNonEmptyString(subject)) {
      const first = subjects.get(subject);
      if (first !== undefined) fail(`duplicate queueSubject "${subject}" (first used by ${first})`);
      else subjects.set(subject, where);
    }
    const port = entry["acpPort"];
    if (port !== undefined && !(typeof port === "number" && Number.isInteger(port) && port > 0)) {
      fail(`acpPort must be > 0 (an integer port, got ${JSON.stringify(port)})`);
    }
    checkSkills(card["skills"], fail);
    if (errors.length > before) return;

    // Structure is sound: let the AgentSpec schema judge the mapped spec, in the file's terms.
    const spec = registryEntryToSpec(entry);
    const parsed = agentSpecSchema.safeParse(spec);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) fail(`${sourcePath(issue.path)}: ${issue.message} (AgentSpec ${issue.path.join(".")})`);
      return;
    }
    specs.push(spec);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, specs };
}

function checkSkills(skills: unknown, fail: (rule: string) => void): void {
  if (!Array.isArray(skills) || skills.length === 0) return fail("at least one skill is required in card.skills");
  const ids = new Map<string, number>();
  skills.forEach((skill: unknown, j) => {
    if (!isPlainObject(skill)) return fail(`card.skills[${j}]: skill must be an object`);
    const id = skill["id"];
    if (!isNonEmptyString(id)) fail(`card.skills[${j}]: skill id must be a non-empty string`);
    if (!isNonEmptyString(skill["name"])) fail(`card.skills[${j}]: skill name must be a non-empty string`);
    if (skill["description"] !== undefined && typeof skill["description"] !== "string") {
      fail(`card.skills[${j}]: skill description must be a string`);
    }
    if (!isNonEmptyString(id)) return;
    // Capability names are unique within a spec (PROTOCOL.md section 3).
    const first = ids.get(id);
    if (first !== undefined) fail(`card.skills[${j}]: duplicate skill id "${id}" (also card.skills[${first}])`);
    else ids.set(id, j);
  });
}

/** `capabilities.2.name` -> `card.skills[2].id`; `nats_subject` -> `queueSubject`. */
function sourcePath(path: readonly PropertyKey[]): string {
  const [head, index, field, ...rest] = path.map(String);
  if (head === "capabilities" && index !== undefined) {
    const skillField = field === undefined ? "" : `.${SKILL_FIELD_SOURCE[field] ?? field}`;
    return `card.skills[${index}]${skillField}${rest.map((p) => `.${p}`).join("")}`;
  }
  const mapped = head === undefined ? "entry" : (FIELD_SOURCE[head] ?? head);
  return [mapped, index, field, ...rest].filter((p) => p !== undefined).join(".");
}
