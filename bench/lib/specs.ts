/**
 * The synthetic fleet: agent types with several capabilities each, where every capability
 * has the same small number of providers whatever the fleet size. Lookups then return
 * replies of the same size at 100 and at 10,000 agent types, so the scaling scenario
 * measures the registry's indexes, not the growth of the answer.
 */
import { agentSpecSchema, type AgentSpec, type AgentSpecInput } from "../../src/domain/spec/spec.js";

/**
 * `v2`: every spec also refers to the named schema BENCH_SCHEMA (PROTOCOL.md section 11.1) and
 * depends on one other agent type, the fleet forming a 4-ary tree (section 11.2).
 */
export type FleetShape = { types: number; capsPerType: number; providersPerCap: number; v2?: boolean };

/** The named schema a v2 fleet's specs refer to; put it before registering them. */
export const BENCH_SCHEMA = { name: "BenchTask", version: "1.0.0", schema: { type: "object", properties: { task_id: { type: "string" }, priority: { type: "integer", minimum: 0 } }, required: ["task_id"] } };

/** The agent type agent t of a v2 fleet depends on (none for the root, 0). */
export const parentOf = (t: number): number | null => (t === 0 ? null : Math.floor((t - 1) / 4));

export const agentTypeName = (t: number): string => `bench-agent-${String(t).padStart(5, "0")}`;

/** Number of distinct capability names in the fleet. */
export const capabilityCount = (s: FleetShape): number => Math.max(s.capsPerType, Math.ceil((s.types * s.capsPerType) / s.providersPerCap));

export const capabilityName = (c: number): string => `bench.skill-${String(c).padStart(5, "0")}`;

// A handful of schema shapes shared across the fleet, as real fleets share their task formats;
// the registry compiles each distinct schema once.
const FIELD_TYPES = ["string", "integer", "number", "boolean"] as const;
function schemaFor(c: number, direction: "input" | "output"): Record<string, unknown> {
  const variant = c % 16;
  const properties: Record<string, unknown> = { task_id: { type: "string" } };
  for (let f = 0; f < 3; f++) properties[`${direction}_${f}_${variant}`] = { type: FIELD_TYPES[(variant + f) % 4], description: `${direction} field ${f}` };
  return { type: "object", properties, required: ["task_id"] };
}

const WORDS = ["summarize", "translate", "classify", "extract", "rank", "plan", "review", "search", "draft", "verify", "route", "tag"];

/** The spec of agent type `t`: capabilities c, c+1, ... of a ring of capabilityCount(s) names. */
export function specInput(t: number, s: FleetShape): AgentSpecInput {
  const total = capabilityCount(s);
  const capabilities = Array.from({ length: s.capsPerType }, (_, j) => {
    const c = (t * s.capsPerType + j) % total;
    return {
      name: capabilityName(c),
      description: `${WORDS[c % WORDS.length]} documents of kind ${c} for the benchmark fleet`,
      input_schema: schemaFor(c, "input"),
      output_schema: schemaFor(c, "output"),
      confidence_hint: ((t * 7 + j) % 10) / 10,
      tags: [WORDS[(c + 3) % WORDS.length]!, `group-${c % 20}`],
    };
  });
  const name = agentTypeName(t);
  const parent = s.v2 ? parentOf(t) : null;
  if (s.v2) for (const c of capabilities) (c.input_schema["properties"] as Record<string, unknown>)["task"] = { $ref: `#${BENCH_SCHEMA.name}:${BENCH_SCHEMA.version}` };
  return {
    ...(parent !== null ? { depends: [{ type: "agent" as const, name: agentTypeName(parent), version: "1.0.0" }] } : {}),
    agent_type: name,
    version: "1.0.0",
    description: `Benchmark agent ${t}: ${WORDS[t % WORDS.length]} and ${WORDS[(t + 5) % WORDS.length]} work`,
    owner_team: `team-${t % 25}`,
    capabilities,
    nats_subject: `agent.tasks.${name}`,
    consumer_group: name,
    tags: { tier: t % 3 === 0 ? "gold" : "standard" },
  };
}

/** The spec as the registry stores it (defaults filled in), for seeding the bucket directly. */
export function storedSpec(t: number, s: FleetShape): AgentSpec {
  return agentSpecSchema.parse(specInput(t, s));
}

export const cardAgentTypeName = (t: number): string => `bench-card-${String(t).padStart(5, "0")}`;

/**
 * The A2A v1.0 Agent Card an agent of the fleet would publish: the capabilities of
 * specInput(t) as skills with their schemas (as Registry v2 cards carry them), served over NATS.
 * Card agents have their own type names: a type's spec and its card's spec differ, and one
 * version names one spec.
 */
export function cardInput(t: number, s: FleetShape): Record<string, unknown> {
  const spec = specInput(t, s);
  return {
    name: `Benchmark card agent ${t}`,
    description: spec.description,
    version: spec.version,
    supportedInterfaces: [{ url: `nats:agent.tasks.${cardAgentTypeName(t)}`, protocolBinding: "NATS", protocolVersion: "1.0" }],
    provider: { organization: spec.owner_team, url: "https://bench.example.test" },
    capabilities: { streaming: false },
    defaultInputModes: ["application/json"],
    defaultOutputModes: ["application/json"],
    skills: spec.capabilities.map((c) => ({
      id: c.name,
      name: c.name,
      description: c.description,
      tags: c.tags ?? [],
      examples: [`${c.description}, please`],
      inputSchema: c.input_schema,
      outputSchema: c.output_schema,
    })),
  };
}
