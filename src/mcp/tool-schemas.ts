/**
 * The output shapes the tools list as `outputSchema`: the registry's replies (PROTOCOL.md
 * sections 2, 10.3, 13) with their required fields and types. Objects are loose, so a field a
 * newer registry adds does not make an older MCP client refuse the result; and the error body
 * is admitted beside each shape, because the official client checks even an error result's
 * structured content against the schema.
 */
import { z } from "zod";
import { TOOL_ERROR_CODES } from "./tool-error.js";

const jsonSchema = z.looseObject({}).describe("a JSON Schema");
const revision = z.number().int().describe("the store revision the answer reflects");
const nextCursor = z.string().nullable().describe("pass it back as `cursor` for the next page; null on the last page");
const status = z.string().describe("registered, ready, draining or deregistered");

export const errorBodySchema = z.object({
  error: z.looseObject({
    code: z.enum(TOOL_ERROR_CODES),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

const modelProvider = z.looseObject({ id: z.string() });

/** v1.2 (docs/trust.md, "Deprecation"): present on an agent type an operator deprecated; it still works. */
const deprecated = z
  .looseObject({ by: z.string(), at: z.string(), reason: z.string().optional(), successor: z.string().optional() })
  .describe("present when an operator deprecated this agent type: it still takes tasks, but prefer `successor` when given")
  .optional();

export const discoverOutput = z.looseObject({
  agents: z.array(
    z.looseObject({
      id: z.string(),
      capabilities: z.array(z.string()),
      status: z.enum(["ready", "busy", "unavailable"]),
      providers: z.array(modelProvider).optional(),
      deprecated,
    }),
  ),
  next_cursor: nextCursor,
  revision,
});

export const capabilitiesListOutput = z.looseObject({
  capabilities: z.array(
    z.looseObject({
      name: z.string(),
      description: z.string(),
      providers: z.array(z.string()).describe("agent types providing it, best first"),
      input_schema: jsonSchema.optional(),
    }),
  ),
  next_cursor: nextCursor,
});

export const lookupOutput = z.looseObject({
  capability: z.string(),
  providers: z.array(
    z.looseObject({
      agent_type: z.string(),
      kind: z.string(),
      version: z.string(),
      nats_subject: z.string(),
      consumer_group: z.string(),
      description: z.string(),
      input_schema: jsonSchema,
      output_schema: jsonSchema,
      confidence_hint: z.number().nullable().optional(),
      status,
      ready_instances: z.number().int(),
      tenant_scope: z.string().nullable(),
      deprecated,
    }),
  ),
  next_cursor: nextCursor,
  revision,
});

export const getOutput = z.looseObject({
  agent: z.looseObject({
    agent_type: z.string(),
    version: z.string(),
    description: z.string(),
    status,
    capabilities: z.array(z.looseObject({ name: z.string(), description: z.string() })),
    nats_subject: z.string(),
    instance_count: z.number().int(),
    instances: z.array(z.looseObject({ instance_id: z.string(), status: z.string() })),
    instances_next_cursor: nextCursor,
    deprecated,
  }),
  revision,
});

export const cardOutput = z.looseObject({
  card: z.looseObject({ name: z.string() }).describe("an A2A Agent Card"),
  revision,
});

export const routeOutput = z.looseObject({
  agent_type: z.string(),
  nats_subject: z.string(),
  consumer_group: z.string(),
  version: z.string(),
  runtime: z.string().nullable(),
  score: z.number(),
  candidates: z.array(z.looseObject({ agent_type: z.string(), score: z.number(), deprecated })),
  revision,
  deprecated,
});

export const searchOutput = z.looseObject({
  results: z.array(z.looseObject({ agent_type: z.string(), capability: z.string(), score: z.number(), deprecated })),
  revision,
});

export const healthOutput = z.looseObject({
  healthy: z.boolean(),
  agents: z.number().int().nullable().describe("agent types not deregistered"),
  ready_agents: z.number().int().nullable().describe("agent types with at least one ready instance"),
  revision: z.number().int().nullable(),
  version: z.string().describe("version of agent-registry serving this MCP endpoint"),
  connected: z.boolean().describe("whether this server is connected to NATS; it keeps trying while it is not"),
  nats_url: z.string().describe("the NATS server(s) this server connects to, credentials redacted"),
  since: z.string().describe("when the connection took its current state (connected, or down), ISO 8601"),
  last_error: z.string().nullable().describe("why the last connection attempt failed, or how the connection was lost; null while connected"),
  reason: z.string().optional().describe("why the registry is not healthy"),
});

export const delegateOutput = z.looseObject({
  agent_type: z.string(),
  nats_subject: z.string(),
  reply: z.unknown().describe("the agent's reply: parsed JSON, or a string when it is not JSON"),
});
