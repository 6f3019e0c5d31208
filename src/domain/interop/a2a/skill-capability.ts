/**
 * One A2A skill as one AgentSpec capability (PROTOCOL.md section 10.1), shared by card import
 * and the static registry file (domain/spec/registry-file.ts):
 *   name          = skill.id
 *   description   = skill.description, else skill.name
 *   tags          = skill.tags the registry can store (1..256 characters, the first 64)
 *   examples      = skill.examples the registry can store (up to 4096 characters, the first 64)
 *   input_schema  = skill.inputSchema (Registry v2 cards), else {}
 *   output_schema = skill.outputSchema, else {}
 * A tag or example the registry cannot store is dropped with a finding rather than refusing
 * the card: A2A puts no limit on them, and the card itself is kept whole.
 */
import { capabilitySchema, type AgentSpecInput } from "../../spec/spec.js";
import type { CardFinding } from "./card-check.js";

type CapabilityInput = AgentSpecInput["capabilities"][number];

/** Skill fields that are not A2A's but that the registry reads (agentgateway Registry v2 cards). */
export const REGISTRY_SKILL_FIELDS: ReadonlySet<string> = new Set(["inputSchema", "outputSchema"]);

/** The AgentSpec's limits on a capability's lists (domain/spec/spec.ts; a test holds them equal). */
export const MAX_CAPABILITY_TAGS = 64;
export const MAX_CAPABILITY_EXAMPLES = 64;

const tagItem = capabilitySchema.shape.tags.unwrap().element;
const exampleItem = capabilitySchema.shape.examples.unwrap().element;

export type SkillCapability = {
  capability: CapabilityInput;
  /** What was left out, at paths relative to the skill (`tags.3`). */
  dropped: CardFinding[];
};

/** The capability of a skill whose `id` and `name` are non-empty strings (the caller checks). */
export function skillToCapability(skill: Record<string, unknown>): SkillCapability {
  const dropped: CardFinding[] = [];
  const description = skill["description"];
  const capability: CapabilityInput = {
    name: skill["id"] as string,
    description: typeof description === "string" && description !== "" ? description : (skill["name"] as string),
    input_schema: (skill["inputSchema"] ?? {}) as CapabilityInput["input_schema"],
    output_schema: (skill["outputSchema"] ?? {}) as CapabilityInput["output_schema"],
    tags: storable(skill["tags"], "tags", tagItem, MAX_CAPABILITY_TAGS, "a tag of 1..256 characters", dropped),
    examples: storable(skill["examples"], "examples", exampleItem, MAX_CAPABILITY_EXAMPLES, "an example of up to 4096 characters", dropped),
  };
  return { capability, dropped };
}

/**
 * The strings of a list that the capability's item schema accepts, the first `max` of them.
 * Items that are not strings are left out silently: the card's schema check reports them.
 */
function storable(list: unknown, field: string, item: { safeParse(v: unknown): { success: boolean } }, max: number, what: string, dropped: CardFinding[]): string[] {
  if (!Array.isArray(list)) return [];
  const kept: string[] = [];
  list.forEach((value, i) => {
    if (typeof value !== "string") return;
    if (!item.safeParse(value).success) dropped.push({ path: `${field}.${i}`, message: `left out of the capability: not ${what}` });
    else kept.push(value);
  });
  if (kept.length > max) dropped.push({ path: field, message: `only the first ${max} are kept on the capability (${kept.length} given)` });
  return kept.slice(0, max);
}
