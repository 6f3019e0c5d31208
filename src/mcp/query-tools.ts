/**
 * The tools that are one registry query each (PROTOCOL.md section 13): the arguments go to the
 * SDK client as the query's body, and the reply comes back as it is. The registry checks what
 * only it can check (capability names, semver ranges, agent types) and its `invalid_request`
 * comes back with the paths it names.
 */
import { z } from "zod";
import { AGENT_KINDS } from "../protocol/spec.js";
import type { DiscoverRequest, GetRequest, LookupRequest, RouteRequest, SearchRequest } from "../protocol/messages.js";
import { defineTool } from "./tool-definition.js";
import { cardOutput, discoverOutput, getOutput, lookupOutput, routeOutput, searchOutput } from "./tool-schemas.js";

/** Page size of the tools that page, when the call names none: enough to choose from, small enough for a model's context. */
export const DEFAULT_PAGE = 50;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const capability = z.string().min(1).max(256).describe("a capability name, dot-separated tokens such as text.summarize");
const agentType = z.string().min(1).max(128).describe("an agent type, such as code-reviewer");
const cursor = z.string().min(1).max(1024).describe("the next_cursor of the previous page");
const limit = (max: number, dflt: number) => z.number().int().min(1).max(max).describe(`items per page, 1..${max} (default ${dflt})`);
const kind = z.enum(AGENT_KINDS).describe("only entries of this kind: agent, mcp_server or tool");
const verifiedOnly = z.boolean().describe("true: only agents whose spec the registry verified against its tenant's trust roots (signed by a key the operator trusts)");

export const agentsDiscoverTool = defineTool({
  name: "agents_discover",
  title: "Discover agents",
  description:
    "List the agents of the fleet that are not deregistered, ordered by id, each with the names of its capabilities and a live status: " +
    "ready (can take a task now), busy (every ready instance is at its task limit) or unavailable (no ready instance). " +
    "Give `capability` to see only the agents that provide it. Use it to get an overview of who is there; " +
    "use capability_lookup to pick the agent for a task and agent_get for one agent's details. Paged: pass next_cursor back as cursor.",
  input: z.strictObject({
    capability: capability.optional(),
    kind: kind.optional(),
    verified_only: verifiedOnly.optional(),
    limit: limit(100, DEFAULT_PAGE).optional(),
    cursor: cursor.optional(),
  }),
  output: discoverOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => {
    const client = await link.client();
    const req: DiscoverRequest = { limit: args.limit ?? DEFAULT_PAGE };
    if (args.capability !== undefined) req.capability = args.capability;
    if (args.kind !== undefined) req.kind = args.kind;
    if (args.verified_only !== undefined) req.verified_only = args.verified_only;
    if (args.cursor !== undefined) req.cursor = args.cursor;
    return client.discover(req);
  },
});

export const capabilityLookupTool = defineTool({
  name: "capability_lookup",
  title: "Look up a capability",
  description:
    "Who provides one capability, best first (highest confidence_hint, then weight): each ready provider with its agent_type, version, " +
    "description, the NATS subject that takes its tasks, how many instances are ready, and the input_schema a task payload must satisfy " +
    "and the output_schema of its answer. An empty providers list means nobody provides it right now. " +
    "Use it when you know the capability name (capabilities_list or search find names); `version` is a semver range such as ^1.2.",
  input: z.strictObject({
    capability,
    version: z.string().min(1).max(256).describe("a semver range the provider's version must satisfy, such as ^1.2").optional(),
    verified_only: verifiedOnly.optional(),
    limit: limit(100, DEFAULT_PAGE).optional(),
    cursor: cursor.optional(),
  }),
  output: lookupOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => {
    const client = await link.client();
    const req: LookupRequest = { capability: args.capability, limit: args.limit ?? DEFAULT_PAGE };
    if (args.version !== undefined) req.version = args.version;
    if (args.verified_only !== undefined) req.verified_only = args.verified_only;
    if (args.cursor !== undefined) req.cursor = args.cursor;
    return client.lookup(req);
  },
});

/** Instances listed by agent_get when the call names no limit: a fleet can run thousands of one type. */
export const DEFAULT_INSTANCES = 20;

export const agentGetTool = defineTool({
  name: "agent_get",
  title: "Get an agent",
  description:
    "Everything the registry holds about one agent type: its spec (description, owner team, capabilities with their schemas, " +
    "NATS subject, limits, tags), its aggregate status, and its live instances with their status and load " +
    `(the first ${DEFAULT_INSTANCES} unless instances_limit says otherwise; instances_next_cursor pages on). ` +
    "Fails with not_found for an agent type the registry does not know.",
  input: z.strictObject({
    agent_type: agentType,
    instances_limit: limit(1000, DEFAULT_INSTANCES).optional(),
    instances_cursor: cursor.describe("the instances_next_cursor of the previous answer").optional(),
  }),
  output: getOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => {
    const client = await link.client();
    const req: GetRequest = { agent_type: args.agent_type, instances_limit: args.instances_limit ?? DEFAULT_INSTANCES };
    if (args.instances_cursor !== undefined) req.instances_cursor = args.instances_cursor;
    return client.get(req);
  },
});

export const agentCardTool = defineTool({
  name: "agent_card",
  title: "Get an agent's A2A card",
  description:
    "The agent as an A2A Agent Card (version 1.0 unless a2a_version says 0.3): name, description, version, url, skills with their " +
    "ids, descriptions, tags and examples. Use it to hand the agent to an A2A client or to read its skills in A2A's terms; " +
    "it holds no liveness (use agent_get for that). Fails with not_found for an unknown agent type.",
  input: z.strictObject({ agent_type: agentType, a2a_version: z.enum(["1.0", "0.3"]).describe("A2A version of the card (default 1.0)").optional() }),
  output: cardOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => (await link.client()).card(args.agent_type, args.a2a_version !== undefined ? { a2aVersion: args.a2a_version } : {}),
});

export const routeTool = defineTool({
  name: "route",
  title: "Route a task",
  description:
    "Pick the one best ready agent for a task: +1 if it provides the capability named `skill`, +0.5 per requested tag found on its " +
    "capabilities, +0.1 if its runtime is `preferred_runtime`, times its weight; ties go to the agent registered first. Returns the " +
    "winner's agent_type, NATS subject and score, and the other candidates. Fails with no_route when no ready agent scores. " +
    "Give at least a skill or tags.",
  input: z.strictObject({
    skill: capability.describe("the capability the task needs").optional(),
    tags: z.array(z.string().min(1).max(256)).max(64).describe("capability tags that should match").optional(),
    preferred_runtime: z.string().min(1).max(128).describe("a runtime to prefer, such as copilot-bridge").optional(),
    verified_only: verifiedOnly.optional(),
  }),
  output: routeOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => {
    const client = await link.client();
    const req: RouteRequest = {};
    if (args.skill !== undefined) req.skill = args.skill;
    if (args.tags !== undefined) req.tags = args.tags;
    if (args.preferred_runtime !== undefined) req.preferred_runtime = args.preferred_runtime;
    if (args.verified_only !== undefined) req.verified_only = args.verified_only;
    return client.route(req);
  },
});

export const searchTool = defineTool({
  name: "search",
  title: "Search capabilities",
  description:
    "Keyword search over capability names, descriptions, tags and examples and over agent descriptions; returns (agent_type, capability, score) " +
    "pairs, best first. Use it when you know what needs doing but not the capability's name, then capability_lookup the name you pick.",
  input: z.strictObject({
    query: z.string().min(1).max(1024).describe("words describing the task"),
    limit: limit(100, 10).optional(),
    verified_only: verifiedOnly.optional(),
  }),
  output: searchOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => {
    const req: SearchRequest = { query: args.query };
    if (args.limit !== undefined) req.limit = args.limit;
    if (args.verified_only !== undefined) req.verified_only = args.verified_only;
    return (await link.client()).search(req);
  },
});

export { READ_ONLY };
