/**
 * The AgentSpec of PROTOCOL.md section 3 as plain types: `AgentSpec` is what the registry
 * stores and returns (defaults applied), `AgentSpecInput` what a client may send (defaults
 * optional). The service validates with zod (domain/spec/spec.ts), and a compile-time check
 * there holds its inferred types equal to these, so the SDK cannot drift from the service.
 */

/** A JSON Schema object; `{}` (or `true`) accepts anything. */
export type JsonSchema = Record<string, unknown> | boolean;

/**
 * The largest routing `weight` a spec may carry. `route` multiplies a score of at most a few
 * points by it, so 1000 lets an operator make one agent win over any sensible mix of others,
 * while 1e308 made one agent win every route and its score overflow to null (issue 14).
 */
export const MAX_WEIGHT = 1000;

/** v1.2: the longest of an AgentSpec's `representative_queries` (as many characters as `search` indexes of an example). */
export const MAX_REPRESENTATIVE_QUERY_LENGTH = 512;

export const SUPPORTED_PATTERNS = ["coordinator_managed", "swarm_peer", "blackboard", "market_bidding"] as const;
export type SupportedPattern = (typeof SUPPORTED_PATTERNS)[number];

/**
 * MCP's tool annotations (hints a client may show or filter on; PROTOCOL.md section 10.2). A tool
 * registered from a tool spec has all four hints explicit, MCP's defaults filled in.
 */
export type ToolAnnotations = {
  title?: string | undefined;
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
};

/** What an entry is: an agent (the default), an MCP server, or a single tool. */
export const AGENT_KINDS = ["agent", "mcp_server", "tool"] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export type Capability = {
  name: string;
  description: string;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
  confidence_hint?: number | undefined;
  tags: string[];
  examples: string[];
  /** A human-readable name (an MCP tool's `title`). */
  title?: string | undefined;
  annotations?: ToolAnnotations | undefined;
  /** An MCP tool's `_meta` (MCP Apps' `ui`, vendor metadata), kept verbatim for export. */
  _meta?: Record<string, unknown> | undefined;
  /** An MCP tool's `icons` (MCP Icon objects: `src`, `mimeType`, `sizes`, `theme`), kept verbatim. */
  icons?: Array<Record<string, unknown>> | undefined;
  /** An MCP tool's `execution` (`taskSupport`), kept verbatim. */
  execution?: Record<string, unknown> | undefined;
  /** The other keys of an MCP tool, those the registry does not know (later MCP versions, vendors), kept verbatim for export. */
  mcp_extra?: Record<string, unknown> | undefined;
};

export type ReflectionConfig = { enabled: boolean; max_rounds: number; criteria: string[]; model: string };

export type ModelProvider = {
  id: string;
  models: string[];
  kind: "llm" | "embedding" | "reranker";
  capabilities: { streaming?: boolean | undefined; tools?: boolean | undefined; vision?: boolean | undefined; jsonMode?: boolean | undefined };
  displayName?: string | undefined;
  description?: string | undefined;
};

/** What a dependency names (PROTOCOL.md section 11.2); a node id of the graph starts with it. */
export const DEPENDENCY_TYPES = ["agent", "tool", "mcp_server"] as const;
export type DependencyType = (typeof DEPENDENCY_TYPES)[number];

export type Dependency = { type: DependencyType; name: string; version: string; capability?: string | undefined };

export type AgentSpec = {
  agent_type: string;
  version: string;
  description: string;
  owner_team: string;
  capabilities: Capability[];
  nats_subject: string;
  consumer_group: string;
  supported_patterns: SupportedPattern[];
  max_concurrent_tasks: number;
  task_timeout_ms: number;
  llm_timeout_ms: number;
  max_retries: number;
  reflection_config: ReflectionConfig | null;
  evaluators: string[];
  tools: string[];
  tenant_scope: string | null;
  tags: Record<string, string>;
  runtime?: string | undefined;
  acp_port?: number | undefined;
  url?: string | undefined;
  weight: number;
  providers?: ModelProvider[] | undefined;
  depends?: Dependency[] | undefined;
  kind: AgentKind;
  /** A human-readable name (an A2A card's `name`). */
  display_name?: string | undefined;
  /**
   * v1.2: 2 to 5 sentences callers ask this agent (ARD's `representativeQueries`), each at
   * most MAX_REPRESENTATIVE_QUERY_LENGTH characters; `search` indexes them with the description.
   */
  representative_queries?: string[] | undefined;
  /** The A2A agent card the spec was built from (a register body or a registry file entry), kept verbatim for export. */
  a2a_card?: Record<string, unknown> | undefined;
};

/** Fields with a default may be left out; the registry fills them in. */
type WithDefaults<T, K extends keyof T> = Omit<T, K> & { [P in K]?: T[P] | undefined };

export type CapabilityInput = WithDefaults<Capability, "tags" | "examples">;

export type AgentSpecInput = WithDefaults<
  Omit<AgentSpec, "capabilities" | "reflection_config" | "providers">,
  | "supported_patterns"
  | "max_concurrent_tasks"
  | "task_timeout_ms"
  | "llm_timeout_ms"
  | "max_retries"
  | "evaluators"
  | "tools"
  | "tenant_scope"
  | "tags"
  | "weight"
  | "kind"
> & {
  capabilities: CapabilityInput[];
  reflection_config?: Partial<ReflectionConfig> | null | undefined;
  providers?: WithDefaults<ModelProvider, "models" | "capabilities">[] | undefined;
};
