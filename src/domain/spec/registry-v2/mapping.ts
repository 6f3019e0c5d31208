/**
 * A checked Registry v2 (or v1) document as what the registry stores (PROTOCOL.md section
 * 11.3; the field table is in docs/protocol.md section 8 and docs/registry-file.md):
 *   - schemas: named schemas of section 11.1, as `registry.schema.put` takes them;
 *   - servers: `mcp_server` entries whose capabilities are the passthrough tools whose
 *     `source.server` names them, each under the tool's own `name` (v1 `source.target` tools:
 *     one `mcp_server` entry per target, version 0.0.0);
 *   - compositions (tools with a `spec`): `tool` entries with one capability of the tool's
 *     name, the composition kept verbatim in that capability's `mcp_extra.spec`;
 *   - agents: A2A cards imported as a card registration does (section 10.1), their
 *     `urn:agentgateway:sbom` entries becoming `depends`.
 * Subjects and owners follow the card and tool-spec imports' defaults: `agent.tasks.<name>` for
 * agents, `mcp.tools.<name>` for servers and tools (with REGISTRY_SUBJECT_POLICY set, the
 * policy's subject for every entry); owner `static` (the registry file's) unless the entry
 * names one. Capability schemas keep their `#Name:Version` refs: the registry
 * resolves them against the schemas loaded first.
 */
import type { AgentSpecInput, CapabilityInput } from "../../../protocol/spec.js";
import { RegistryError } from "../../errors.js";
import { findRefs, refKey } from "../../schemas/schema-refs.js";
import { importCard } from "../../interop/a2a/import-card.js";
import { defaultNatsSubject } from "../../interop/mcp/import.js";
import { AGENT_TYPE_RE, agentSpecSchema, isPlainObject } from "../spec.js";
import { DEFAULT_OWNER_TEAM } from "../registry-file.js";
import { policySubject } from "../subject-rules.js";
import type { FileDependency, FileTool, RegistryDocument } from "./document.js";
import { ProblemCode, type FileProblem } from "./problems.js";

export type FileSchemaPut = { name: string; version: string; schema: Record<string, unknown> | boolean; description: string };
export type MappedEntry = { spec: AgentSpecInput; path: string };
export type MappedDocument = { schemas: FileSchemaPut[]; entries: MappedEntry[] };

/** Version of the `mcp_server` entry of a v1 gateway backend: the file gives it none. */
export const V1_TARGET_VERSION = "0.0.0";

const text = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const toDepends = (deps: FileDependency[]): NonNullable<AgentSpecInput["depends"]> =>
  deps.map((d) => ({ type: d.type, name: d.name, version: d.version, ...(d.capability === undefined ? {} : { capability: d.capability }) }));

/** A tool as a capability: its name, description, schemas (refs kept) and the rest verbatim. */
function toolCapability(t: FileTool, extra: Record<string, unknown>): CapabilityInput {
  const tags = t.raw["tags"];
  const cap: CapabilityInput = {
    name: t.name,
    description: text(t.raw["description"]) ?? t.name,
    // MCP tool arguments are an object: a tool that declares no input schema takes any object.
    input_schema: (t.raw["inputSchema"] as CapabilityInput["input_schema"] | undefined) ?? { type: "object" },
    output_schema: (t.raw["outputSchema"] as CapabilityInput["output_schema"] | undefined) ?? {},
    mcp_extra: { version: t.version, ...extra },
  };
  if (Array.isArray(tags) && tags.every((x) => typeof x === "string")) cap.tags = tags as string[];
  return cap;
}

export type MappingOptions = {
  /**
   * REGISTRY_SUBJECT_POLICY, when the deployment sets one: every entry then gets the policy's
   * subject instead of the defaults, since a file entry has no field to name its own.
   */
  subjectPolicy?: string | undefined;
};

export function mapRegistryDocument(doc: RegistryDocument, options: MappingOptions = {}): { mapped: MappedDocument; problems: FileProblem[] } {
  const policy = options.subjectPolicy;
  const mcpSubject = (name: string): string => (policy === undefined ? defaultNatsSubject(name) : policySubject(name, policy));
  const problems: FileProblem[] = [];
  const invalid = (path: string, message: string): void => void problems.push({ severity: "error", code: ProblemCode.InvalidEntry, message, path });
  const entries: MappedEntry[] = [];
  const add = (spec: AgentSpecInput, path: string): void => {
    if (!AGENT_TYPE_RE.test(spec.agent_type)) return invalid(`${path}.name`, `"${spec.agent_type}" is not usable as a registry entry name (an agent_type: lower-case letters, digits, "_" and "-", 1..128 characters)`);
    const parsed = agentSpecSchema.safeParse(spec);
    if (!parsed.success) for (const issue of parsed.error.issues.slice(0, 20)) invalid(path, `${issue.path.join(".") || "entry"}: ${issue.message} (as an AgentSpec)`);
    else entries.push({ spec, path });
  };

  for (const s of doc.servers) {
    const tools = doc.tools.filter((t) => t.source?.server === s.name);
    // An mcp_server entry needs a capability: a server no tool serves is reported, not registered.
    if (tools.length === 0) {
      problems.push({ severity: "warning", code: ProblemCode.DanglingProvides, path: s.path, message: `server ${s.name} has no tool of the file (source.server "${s.name}"); it is not registered` });
      continue;
    }
    const metadata = isPlainObject(s.raw["metadata"]) ? s.raw["metadata"] : {};
    const spec: AgentSpecInput = {
      agent_type: s.name,
      version: s.version,
      description: text(s.raw["description"]) ?? s.name,
      owner_team: text(metadata["owner"]) ?? DEFAULT_OWNER_TEAM,
      capabilities: tools.map((t) => toolCapability(t, { source: t.source })),
      nats_subject: mcpSubject(s.name),
      consumer_group: s.name,
      kind: "mcp_server",
    };
    if (text(s.raw["url"])) spec.url = s.raw["url"] as string;
    add(spec, s.path);
  }

  const targets = new Map<string, FileTool[]>();
  for (const t of doc.tools) if (t.source && t.source.server === undefined) targets.set(t.source.target!, [...(targets.get(t.source.target!) ?? []), t]);
  for (const [target, tools] of targets) {
    const spec: AgentSpecInput = {
      agent_type: target,
      version: V1_TARGET_VERSION,
      description: `gateway backend ${target} (tools of a registry file naming it as source.target)`,
      owner_team: DEFAULT_OWNER_TEAM,
      capabilities: tools.map((t) => toolCapability(t, { source: t.source })),
      nats_subject: mcpSubject(target),
      consumer_group: target,
      kind: "mcp_server",
    };
    add(spec, `${tools[0]!.path}.source.target`);
  }

  for (const t of doc.tools) {
    if (t.spec === undefined) continue;
    const spec: AgentSpecInput = {
      agent_type: t.name,
      version: t.version,
      description: text(t.raw["description"]) ?? t.name,
      owner_team: DEFAULT_OWNER_TEAM,
      capabilities: [toolCapability(t, { spec: t.spec })],
      nats_subject: mcpSubject(t.name),
      consumer_group: t.name,
      kind: "tool",
    };
    if (t.depends.length > 0) spec.depends = toDepends(t.depends);
    add(spec, t.path);
  }

  for (const a of doc.agents) {
    const provider = a.card["provider"];
    const org = isPlainObject(provider) ? text(provider["organization"]) : undefined;
    try {
      // Not strict, as a card registration: older cards (protocolVersion 0.2.x) load with advice only.
      const subject = policy === undefined ? {} : { nats_subject: policySubject(a.name, policy) };
      const { spec } = importCard(a.card, { agent_type: a.name, owner_team: org ?? DEFAULT_OWNER_TEAM, ...subject });
      add(spec, a.path);
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
      const issues = e.issues ?? [];
      if (issues.length === 0) invalid(a.path, e.message);
      for (const issue of issues) invalid(issue.path ? `${a.path}.${issue.path.replace(/^a2a_card\.?/, "")}` : a.path, issue.message);
    }
  }
  const schemas = doc.schemas.map((s) => ({ name: s.name, version: s.version, schema: s.schema, description: s.description }));
  return { mapped: { schemas: orderByRefs(schemas), entries }, problems };
}

/** Schemas in an order the registry can store them: each after the schemas it refers to. */
function orderByRefs(schemas: FileSchemaPut[]): FileSchemaPut[] {
  const byKey = new Map(schemas.map((s) => [refKey(s.name, s.version), s]));
  const out: FileSchemaPut[] = [];
  const placed = new Set<string>();
  const visit = (key: string, depth: number): void => {
    const s = byKey.get(key);
    if (!s || placed.has(key) || depth > schemas.length) return;
    placed.add(key);
    for (const ref of findRefs(s.schema).refs) visit(refKey(ref.name, ref.version), depth + 1);
    out.push(s);
  };
  for (const key of byKey.keys()) visit(key, 0);
  return out;
}
