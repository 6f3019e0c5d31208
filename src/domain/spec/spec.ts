/**
 * The AgentSpec of PROTOCOL.md section 3: its wire shape (zod), its defaults, and the
 * names of fields that were sent but are not part of it (they are dropped and reported
 * in the register reply's `warnings`).
 */
import { z } from "zod";
import semver from "semver";

import type * as wire from "../../protocol/spec.js";
import {
  AGENT_TYPE_RE,
  CAPABILITY_MAX_LENGTH,
  CAPABILITY_RE,
  INSTANCE_ID_RE,
  NATS_SUBJECT_RE,
  QUEUE_GROUP_RE,
  RESERVED_SUBJECT_RE,
  TENANT_RE,
  unsafeNameChar,
} from "../../protocol/ids.js";
import { AGENT_KINDS, DEPENDENCY_TYPES, MAX_REPRESENTATIVE_QUERY_LENGTH, MAX_WEIGHT, SUPPORTED_PATTERNS } from "../../protocol/spec.js";
import { jsonBoundProblem } from "./json-bounds.js";

export { AGENT_TYPE_RE, CAPABILITY_RE, INSTANCE_ID_RE, SUPPORTED_PATTERNS, TENANT_RE };

export const agentType = z.string().regex(AGENT_TYPE_RE, `must match ${AGENT_TYPE_RE.source}`);
export const instanceId = z.string().regex(INSTANCE_ID_RE, `must match ${INSTANCE_ID_RE.source}`);
export const tenant = z.string().regex(TENANT_RE, `must match ${TENANT_RE.source}`);
export const capabilityName = z
  .string()
  .max(CAPABILITY_MAX_LENGTH, `at most ${CAPABILITY_MAX_LENGTH} characters`)
  .regex(CAPABILITY_RE, "dot-separated tokens of [A-Za-z0-9_-]");
export const specVersion = z
  .string()
  .max(256)
  .refine((v) => semver.valid(v) !== null && /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(v), "must be semver X.Y.Z[-prerelease]");

const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);
const stringMap = z.record(z.string().max(256), z.string().max(4096));

/**
 * Bounds of the MCP tool keys a capability keeps as they came (PROTOCOL.md section 10.2), as
 * characters of JSON text: `_meta` (MCP Apps' `ui`, vendor keys), `icons` (URLs or small
 * `data:` images), `execution` (`taskSupport`), and every other kept key together in `mcp_extra`
 * (a Registry v2 file's composition lives there), as large as a capability schema may be.
 */
export const MCP_KEPT_LIMITS = { _meta: 16 * 1024, icons: 32 * 1024, execution: 4 * 1024, mcp_extra: 64 * 1024 } as const;
/** Most icons one tool may list. */
export const MAX_MCP_ICONS = 16;

/** A JSON value kept verbatim, refused (with its path) past its size or nesting bound. */
const keptJson = <T extends z.ZodType>(inner: T, maxChars: number) =>
  inner.superRefine((value, ctx) => {
    const problem = jsonBoundProblem(value, maxChars);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
const jsonObject = z.record(z.string().max(256), z.unknown());

export const capabilitySchema = z.object({
  name: capabilityName,
  description: z.string().max(8192),
  input_schema: jsonSchema,
  output_schema: jsonSchema,
  confidence_hint: z.number().min(0).max(1).optional(),
  tags: z.array(z.string().min(1).max(256)).max(64).default([]),
  examples: z.array(z.string().max(4096)).max(64).default([]),
  title: z.string().max(1024).optional(),
  annotations: z
    .object({
      title: z.string().max(1024).optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
  // An MCP tool's own keys, under MCP's names (2025-11-25 schema: Tool._meta, Icons.icons, Tool.execution).
  _meta: keptJson(jsonObject, MCP_KEPT_LIMITS._meta).optional(),
  icons: keptJson(z.array(jsonObject).max(MAX_MCP_ICONS, `at most ${MAX_MCP_ICONS} icons`), MCP_KEPT_LIMITS.icons).optional(),
  execution: keptJson(jsonObject, MCP_KEPT_LIMITS.execution).optional(),
  mcp_extra: keptJson(jsonObject, MCP_KEPT_LIMITS.mcp_extra).optional(),
});

const reflectionConfig = z.object({
  enabled: z.boolean().default(true),
  max_rounds: z.number().int().min(1).max(5).default(2),
  criteria: z.array(z.string().max(256)).max(32).default(["completeness", "accuracy"]),
  model: z.string().max(256).default("gpt-4o-mini"),
});

const providerSchema = z.object({
  id: z.string().min(1).max(256),
  models: z.array(z.string().max(256)).max(256).default([]),
  kind: z.enum(["llm", "embedding", "reranker"]),
  capabilities: z
    .object({
      streaming: z.boolean().optional(),
      tools: z.boolean().optional(),
      vision: z.boolean().optional(),
      jsonMode: z.boolean().optional(),
    })
    .default({}),
  displayName: z.string().max(256).optional(),
  description: z.string().max(4096).optional(),
});

/** A name people read (UNSAFE_NAME_CHAR_RE): the issue says which character and where. */
const displayedName = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .check((ctx) => {
      const bad = unsafeNameChar(ctx.value);
      if (bad !== null) ctx.issues.push({ code: "custom", input: ctx.value, message: `holds ${bad}: control characters and invisible formatting characters (bidi, zero-width) are not allowed` });
    });

const dependencySchema = z.object({
  type: z.enum(DEPENDENCY_TYPES),
  name: displayedName(256),
  version: z.string().refine((v) => semver.valid(v) !== null, "must be an exact semver version"),
  capability: capabilityName.optional(),
});

export const agentSpecSchema = z.object({
  agent_type: agentType,
  version: specVersion,
  description: z.string().max(8192),
  owner_team: z.string().min(1).max(256),
  capabilities: z.array(capabilitySchema).min(1, "at least one capability").max(256, "at most 256 capabilities"),
  nats_subject: z
    .string()
    .min(1)
    .max(512)
    .regex(NATS_SUBJECT_RE, "a NATS subject without wildcards, spaces or control characters")
    .refine((s) => !RESERVED_SUBJECT_RE.test(s), "must not be a NATS system subject ($...) or a reply inbox (_INBOX...)"),
  consumer_group: z.string().min(1).max(256).regex(QUEUE_GROUP_RE, "a NATS queue group name without spaces or control characters"),
  supported_patterns: z.array(z.enum(SUPPORTED_PATTERNS)).default(["coordinator_managed"]),
  max_concurrent_tasks: z.number().int().min(1).default(10),
  task_timeout_ms: z.number().int().min(1000).default(60000),
  llm_timeout_ms: z.number().int().min(1000).default(30000),
  max_retries: z.number().int().min(0).default(3),
  reflection_config: reflectionConfig.nullable().default({
    enabled: true,
    max_rounds: 2,
    criteria: ["completeness", "accuracy"],
    model: "gpt-4o-mini",
  }),
  evaluators: z.array(z.string().max(256)).max(256).default([]),
  tools: z.array(z.string().max(256)).max(1024).default([]),
  tenant_scope: tenant.nullable().default(null),
  tags: stringMap.default({}),
  runtime: z.string().min(1).max(128).optional(),
  acp_port: z.number().int().min(1).max(65535).optional(),
  url: z.string().max(2048).optional(),
  weight: z.number().positive().max(MAX_WEIGHT, `at most ${MAX_WEIGHT}`).default(1),
  providers: z.array(providerSchema).max(64).optional(),
  depends: z.array(dependencySchema).max(256).optional(),
  kind: z.enum(AGENT_KINDS).default("agent"),
  display_name: z.string().min(1).max(1024).optional(),
  // v1.2: what callers ask this agent, in their words (ARD's representativeQueries); searched with the description.
  representative_queries: z.array(z.string().min(1).max(MAX_REPRESENTATIVE_QUERY_LENGTH)).min(2).max(5).optional(),
  // The A2A card the spec was built from, kept verbatim for export (PROTOCOL.md section 10.1).
  a2a_card: z.record(z.string(), z.unknown()).optional(),
});

export type AgentSpec = z.infer<typeof agentSpecSchema>;
export type Capability = z.infer<typeof capabilitySchema>;
export type AgentSpecInput = z.input<typeof agentSpecSchema>;

// The wire types of src/protocol (what the SDK publishes) must be exactly what zod infers here:
// a field added to one and not the other fails the type-check.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameSpec: Same<AgentSpec, wire.AgentSpec> = true;
const sameCapability: Same<Capability, wire.Capability> = true;
const sameInput: Same<AgentSpecInput, wire.AgentSpecInput> = true;
void [sameSpec, sameCapability, sameInput];

/** Fields managed by the registry: accepted and ignored on input, never warned about. */
const MANAGED_FIELDS = new Set(["status", "registered_at", "last_heartbeat"]);
/** The same for a capability: what replies add to it (`get --json` fed back to `register`). */
const MANAGED_CAPABILITY_FIELDS = new Set(["effective_annotations"]);

/**
 * Names of the fields of a raw spec that the schema does not know, as dotted paths
 * (`spec.foo`, `spec.capabilities.2.bar`). They are dropped by parsing; the reply lists them.
 */
export function unknownSpecFields(raw: unknown): string[] {
  if (!isPlainObject(raw)) return [];
  const warnings: string[] = [];
  const known = new Set(Object.keys(agentSpecSchema.shape));
  for (const key of Object.keys(raw)) {
    if (!known.has(key) && !MANAGED_FIELDS.has(key)) warnings.push(`spec.${key}`);
  }
  const caps = raw["capabilities"];
  if (Array.isArray(caps)) {
    const capKnown = new Set(Object.keys(capabilitySchema.shape));
    caps.forEach((cap, i) => {
      if (!isPlainObject(cap)) return;
      for (const key of Object.keys(cap)) if (!capKnown.has(key) && !MANAGED_CAPABILITY_FIELDS.has(key)) warnings.push(`spec.capabilities.${i}.${key}`);
    });
  }
  return warnings;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
