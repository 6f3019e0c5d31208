/**
 * Registering an MCP server with its tool spec (PROTOCOL.md section 10.2): the register body's
 * `mcp_toolspec` (`{"tools": [...]}` as `tools/list` returns it) and fields become an AgentSpec
 * input, one capability per tool. Pure mapping: the caller runs the result through the spec's
 * own validation (validateSpec, or the service's checks in worker threads), which refuses what
 * breaks section 3 as `invalid_spec` (lengths, schemas that do not compile, a remote `$ref`).
 * Capability `i` is tool `i`, so those paths (`capabilities.3.input_schema`) name the tool too.
 *
 * Tool → capability:
 *   name          = name (a capability name: dot-separated `[A-Za-z0-9_-]` tokens; a name with
 *                   dots becomes several subject tokens in `registry.capability.changed.<name>`,
 *                   which is allowed; subscribe with `>` to see them all)
 *   description   = description, else title, else annotations.title, else name (MCP's display
 *                   precedence after the description)
 *   title         = title
 *   input_schema  = inputSchema (required, `type: "object"`)
 *   output_schema = outputSchema, else {}
 *   annotations   = annotations exactly as given (v1.2; none when the tool has none): MCP's
 *                   defaults are shown apart, as `effective_annotations` (tool.ts)
 *   _meta, icons, execution
 *                 = the same keys, verbatim, when each has MCP's type (an object, an array of
 *                   objects, an object); bounded in size (MCP_KEPT_LIMITS), past which the tool
 *                   spec is refused naming the key
 *   mcp_extra     = every other key (later MCP versions', vendors'), and one of those three of
 *                   another type, verbatim
 * A schema that declares no `$schema` but uses 2020-12-only keywords gets
 * `$schema: 2020-12` declared, because MCP reads undeclared schemas as 2020-12 and the registry
 * as draft-07 (dialect.ts); other schemas are kept as they came.
 *
 * Body → spec: agent_type from the caller (the subject); kind "mcp_server" unless given;
 * version (a `1.0`-like version completed, with a warning); description; owner_team, else
 * "unknown"; nats_subject, else `mcp.tools.<agent_type>`; consumer_group, else agent_type;
 * url and tenant_scope when given. The default subject keeps MCP servers out of
 * `agent.tasks.>` (where A2A agents get theirs), so NATS permissions can grant MCP bridges
 * `mcp.tools.>` alone; a deployment whose REGISTRY_SUBJECT_POLICY wants another subject sends
 * `nats_subject`.
 *
 * Problems with the tool spec itself are `invalid_card` with paths under `mcp_toolspec`, all
 * of them at once up to MAX_ISSUES.
 */
import type { ErrorIssue } from "../../errors.js";
import { invalidCard } from "../../errors.js";
import type { AgentSpecInput, CapabilityInput } from "../../../protocol/spec.js";
import { MAX_MCP_ICONS, MCP_KEPT_LIMITS, capabilityName, isPlainObject } from "../../spec/spec.js";
import { jsonBoundProblem } from "../../spec/json-bounds.js";
import { describeIssues } from "../../spec/validation.js";
import { declareDialect } from "./dialect.js";
import { toolspecHazard } from "./guard.js";
import { ANNOTATION_HINTS, KEPT_TOOL_KEYS, MAPPED_TOOL_KEYS, MAX_TOOLS, MCP_TOOL_NAME_MAX, type KeptToolKey } from "./tool.js";
import { completeVersion } from "../../spec/version-completion.js";

/** The register body fields this mapping reads (PROTOCOL.md section 10.2); others are the service's. */
export type ToolspecRegisterBody = {
  mcp_toolspec: unknown;
  description?: unknown;
  version?: unknown;
  owner_team?: unknown;
  url?: unknown;
  nats_subject?: unknown;
  consumer_group?: unknown;
  tenant_scope?: unknown;
  kind?: unknown;
};

export type ImportOptions = { agentType: string };
export type ImportedToolspec = { spec: AgentSpecInput; warnings: string[] };

export const DEFAULT_OWNER_TEAM = "unknown";
export const DEFAULT_KIND = "mcp_server";
export const defaultNatsSubject = (agentType: string): string => `mcp.tools.${agentType}`;

const ROOT = "mcp_toolspec";
const MAX_ISSUES = 20;
const NAME_RULE =
  'letters A-Z and a-z, digits, "_" and "-", with "." only between them (dot-separated tokens of [A-Za-z0-9_-]), at most 256 characters';

export function importToolspec(body: ToolspecRegisterBody, options: ImportOptions): ImportedToolspec {
  const warnings: string[] = [];
  const tools = readTools(body.mcp_toolspec, warnings);
  const issues: ErrorIssue[] = [];
  const firstByName = new Map<string, number>();
  const capabilities: CapabilityInput[] = [];
  tools.forEach((tool, i) => {
    const cap = toCapability(tool, `${ROOT}.tools.${i}`, issues, warnings);
    if (!cap) return;
    const first = firstByName.get(cap.name);
    if (first === undefined) firstByName.set(cap.name, i);
    else issues.push({ path: `${ROOT}.tools.${i}.name`, message: `duplicate tool name "${cap.name}" (also at ${ROOT}.tools.${first}.name)` });
    capabilities.push(cap);
  });
  if (issues.length > 0) throw invalidCard(`mcp_toolspec cannot be used: ${describeIssues(issues)}`, issues.slice(0, MAX_ISSUES));

  // A version that cannot be completed is passed on as sent: the spec's own check names the rule.
  const completed = typeof body.version === "string" ? completeVersion(body.version) : null;
  const version = completed?.version ?? body.version;
  if (completed?.completed) warnings.push(`version: "${body.version as string}" is not semver X.Y.Z; registered as "${completed.version}"`);
  const agentType = options.agentType;
  const spec: AgentSpecInput = {
    agent_type: agentType,
    version: version as string,
    description: body.description as string,
    owner_team: (body.owner_team ?? DEFAULT_OWNER_TEAM) as string,
    capabilities,
    nats_subject: (body.nats_subject ?? defaultNatsSubject(agentType)) as string,
    consumer_group: (body.consumer_group ?? agentType) as string,
    kind: (body.kind ?? DEFAULT_KIND) as AgentSpecInput["kind"],
  };
  // Body fields are passed on as sent: the spec's validation names a wrong one by its own name.
  if (body.url !== undefined) spec.url = body.url as string;
  if (body.tenant_scope !== undefined) spec.tenant_scope = body.tenant_scope as string | null;
  return { spec, warnings: boundWarnings(warnings) };
}

/** The first MAX_ISSUES warnings and a count of the rest: a reply must fit NATS max_payload. */
function boundWarnings(warnings: string[]): string[] {
  if (warnings.length <= MAX_ISSUES) return warnings;
  return [...warnings.slice(0, MAX_ISSUES), `and ${warnings.length - MAX_ISSUES} more warnings`];
}

/** A value quoted in a message, cut short: names and types come from the sender and may be huge. */
function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? "absent";
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The tool list, or invalid_card when the tool spec is not `{"tools": [1..256 tools]}` or breaks
 * the guard's bounds. Other keys of a tools/list result (`_meta`) are not the server's tools
 * and are ignored; a `nextCursor` means the list was cut, which the reply should say.
 */
function readTools(sent: unknown, warnings: string[]): unknown[] {
  const refuse = (path: string, message: string) => invalidCard(`mcp_toolspec cannot be used: ${path}: ${message}`, [{ path, message }]);
  const toolspec = unwrapResponse(sent, warnings, refuse);
  if (!isPlainObject(toolspec)) throw refuse(ROOT, 'expected an object {"tools": [...]}, the result of MCP tools/list');
  const tools = toolspec["tools"];
  if (!Array.isArray(tools)) throw refuse(`${ROOT}.tools`, "expected an array of MCP tools");
  if (tools.length === 0) throw refuse(`${ROOT}.tools`, "at least one tool");
  if (tools.length > MAX_TOOLS) throw refuse(`${ROOT}.tools`, `${tools.length} tools; at most ${MAX_TOOLS} (a spec's capability limit)`);
  // After the count, so an enormous list is refused without walking it.
  const hazard = toolspecHazard(toolspec, ROOT);
  if (hazard) throw refuse(hazard.path, hazard.message);
  if (typeof toolspec["nextCursor"] === "string") warnings.push(`${ROOT}.nextCursor: tools/list has more pages; only the tools sent were registered`);
  return tools;
}

/**
 * A whole JSON-RPC response to tools/list, as a client logs it ({"jsonrpc", "id", "result"}),
 * stands for its result: that is the document meant. An error response is refused with its
 * message. Anything else is returned as sent.
 */
function unwrapResponse(sent: unknown, warnings: string[], refuse: (path: string, message: string) => Error): unknown {
  if (!isPlainObject(sent) || typeof sent["jsonrpc"] !== "string" || sent["tools"] !== undefined) return sent;
  if (isPlainObject(sent["error"])) {
    const message = sent["error"]["message"];
    throw refuse(`${ROOT}.error`, `a JSON-RPC error response, not a tools/list result${typeof message === "string" ? `: ${quote(message)}` : ""}`);
  }
  if (!isPlainObject(sent["result"])) return sent;
  warnings.push(`${ROOT}: a whole JSON-RPC response; its result was registered (paths below are within the result)`);
  return sent["result"];
}

/** One tool's capability; its problems go to `issues` (null when it has any). */
function toCapability(tool: unknown, at: string, issues: ErrorIssue[], warnings: string[]): CapabilityInput | null {
  const before = issues.length;
  const problem = (field: string, message: string) => issues.push({ path: field ? `${at}.${field}` : at, message });
  if (!isPlainObject(tool)) {
    problem("", "expected an MCP tool object");
    return null;
  }
  const { name, title, description, inputSchema, outputSchema, annotations } = tool;
  if (typeof name !== "string") problem("name", "expected a string");
  else if (!capabilityName.safeParse(name).success) problem("name", `tool name ${quote(name)} is not usable as a capability name: use ${NAME_RULE}`);
  else if (name.length > MCP_TOOL_NAME_MAX) warnings.push(`${at}.name: longer than the ${MCP_TOOL_NAME_MAX} characters MCP recommends`);
  for (const [field, value] of [["title", title], ["description", description]] as const) {
    if (value !== undefined && typeof value !== "string") problem(field, "expected a string");
  }
  if (inputSchema === undefined) problem("inputSchema", 'required: a JSON Schema object with type "object" (MCP tool arguments are a JSON object)');
  else if (!isPlainObject(inputSchema)) problem("inputSchema", 'expected a JSON Schema object with type "object"');
  else if (inputSchema["type"] !== "object") problem("inputSchema.type", `must be "object" (MCP tool arguments are a JSON object), not ${quote(inputSchema["type"])}`);
  if (outputSchema !== undefined && !isPlainObject(outputSchema) && typeof outputSchema !== "boolean") problem("outputSchema", "expected a JSON Schema (an object or a boolean)");
  const kept = readAnnotations(annotations, `${at}.annotations`, issues, warnings);
  const { known, extra } = keptKeys(tool, at, issues, warnings);
  if (issues.length > before) return null;

  const annotationTitle = kept?.title;
  const cap: CapabilityInput = {
    name: name as string,
    description: (description ?? title ?? annotationTitle ?? name) as string,
    input_schema: declareDialect(inputSchema as Record<string, unknown>, "2020-12"),
    output_schema: isPlainObject(outputSchema) ? declareDialect(outputSchema, "2020-12") : ((outputSchema as boolean | undefined) ?? {}),
  };
  if (kept !== undefined) cap.annotations = kept;
  if (title !== undefined) cap.title = title as string;
  Object.assign(cap, known);
  if (extra !== undefined) cap.mcp_extra = extra;
  return cap;
}

/** Whether a kept key has the JSON type MCP gives it. */
const HAS_MCP_TYPE: Readonly<Record<KeptToolKey, (v: unknown) => boolean>> = {
  _meta: isPlainObject,
  icons: (v) => Array.isArray(v) && v.every(isPlainObject),
  execution: isPlainObject,
};

/**
 * The tool's keys the registry does not map to other fields: `_meta`, `icons` and `execution`
 * under their own names when each has MCP's type, the rest (those of another type too) for
 * `mcp_extra`; each within its bound, else an issue naming it and the limit.
 */
function keptKeys(tool: Record<string, unknown>, at: string, issues: ErrorIssue[], warnings: string[]): { known: Partial<Record<KeptToolKey, unknown>>; extra: Record<string, unknown> | undefined } {
  const known: Partial<Record<KeptToolKey, unknown>> = {};
  const rest: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(tool)) {
    if (MAPPED_TOOL_KEYS.has(key)) continue;
    if (!(KEPT_TOOL_KEYS as readonly string[]).includes(key)) {
      rest.push([key, value]);
      continue;
    }
    const k = key as KeptToolKey;
    if (!HAS_MCP_TYPE[k](value)) {
      warnings.push(`${at}.${k}: not ${k === "icons" ? "an array of MCP Icon objects" : "an object"} as MCP defines it; kept as it came in mcp_extra`);
      rest.push([key, value]);
      continue;
    }
    const tooBig = jsonBoundProblem(value, MCP_KEPT_LIMITS[k]);
    if (tooBig) issues.push({ path: `${at}.${k}`, message: tooBig });
    else if (k === "icons" && (value as unknown[]).length > MAX_MCP_ICONS) issues.push({ path: `${at}.icons`, message: `${(value as unknown[]).length} icons; at most ${MAX_MCP_ICONS}` });
    else known[k] = value;
  }
  if (rest.length === 0) return { known, extra: undefined };
  // fromEntries defines own properties, so a kept key such as `__proto__` stays data.
  const extra = Object.fromEntries(rest);
  const tooBig = jsonBoundProblem(extra, MCP_KEPT_LIMITS.mcp_extra);
  if (tooBig) issues.push({ path: at, message: `the keys kept in mcp_extra (${rest.map(([k]) => quote(k)).join(", ").slice(0, 200)}) are ${tooBig}` });
  return { known, extra };
}

/**
 * The tool's annotations exactly as given (undefined when it has none): nothing is added, since
 * a default written out is read by MCP clients as the server's own word (`destructiveHint: true`
 * on a read-only tool shows it as destructive). Unknown keys are named in warnings and dropped.
 */
function readAnnotations(annotations: unknown, at: string, issues: ErrorIssue[], warnings: string[]): CapabilityInput["annotations"] {
  if (annotations === undefined) return undefined;
  const out: NonNullable<CapabilityInput["annotations"]> = {};
  if (!isPlainObject(annotations)) {
    issues.push({ path: at, message: "expected an object (MCP ToolAnnotations)" });
    return out;
  }
  for (const [key, value] of Object.entries(annotations)) {
    if (key === "title") {
      if (typeof value === "string") out.title = value;
      else issues.push({ path: `${at}.title`, message: "expected a string" });
    } else if ((ANNOTATION_HINTS as readonly string[]).includes(key)) {
      if (typeof value === "boolean") out[key as (typeof ANNOTATION_HINTS)[number]] = value;
      else issues.push({ path: `${at}.${key}`, message: "expected a boolean" });
    } else warnings.push(`${at}.${key}: not an MCP tool annotation, not stored`);
  }
  return out;
}
