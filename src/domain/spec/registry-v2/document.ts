/**
 * A Registry v2 (or v1 gateway) registry file read into a checked model (PROTOCOL.md section
 * 11.3). The shape is agentgateway's: `{"schemaVersion": "2.0", "schemas", "servers", "tools",
 * "agents"}`, where tools are passthrough (`source`) or compositions (`spec`) and agents are
 * bare A2A cards; a `{"schemaVersion": "1.0", "tools"}` document is its older gateway form.
 *
 * This module only reads structure: an entry that breaks it is reported as `invalid_entry`
 * (with its path) and left out of the model, so the cross-entry rules (checks.ts) judge only
 * sound entries and one mistake is not reported twice. Pure: no I/O.
 */
import { isPlainObject } from "../spec.js";
import { SCHEMA_NAME_RE, SCHEMA_VERSION_RE } from "../../../protocol/ids.js";
import { DEPENDENCY_TYPES } from "../../../protocol/spec.js";
import { SBOM_EXTENSION_URI } from "../../interop/a2a/sbom-extension.js";
import { ProblemCode, type FileProblem } from "./problems.js";

/** What a registry file is: today's list of agents, or one of the gateway's documents. */
export type RegistryFileKind = "agents" | "v2" | "v1";

/** Entries read per section: enough for any fleet file, and a bound on the checks' work. */
export const MAX_SECTION_ENTRIES = 2000;
/** Dependencies of one entry: what an AgentSpec's `depends` may hold. */
export const MAX_DEPENDS = 256;

export type FileDependency = { type: (typeof DEPENDENCY_TYPES)[number]; name: string; version: string; capability?: string; path: string };
export type Deprecation = string | undefined;

export type FileSchema = { name: string; version: string; description: string; schema: Record<string, unknown> | boolean; deprecated: Deprecation; path: string };
export type FileServer = { name: string; version: string; raw: Record<string, unknown>; provides: Array<{ tool: string; path: string }>; deprecated: Deprecation; path: string };
export type ToolSource = { server?: string; serverVersion?: string; target?: string; tool?: string };
export type FileTool = {
  name: string;
  version: string;
  raw: Record<string, unknown>;
  /** Passthrough tools have a source, compositions a spec: exactly one of the two. */
  source?: ToolSource;
  spec?: Record<string, unknown>;
  depends: FileDependency[];
  deprecated: Deprecation;
  path: string;
};
export type FileAgent = { name: string; version: string; card: Record<string, unknown>; depends: FileDependency[]; deprecated: Deprecation; path: string };

export type RegistryDocument = { kind: "v2" | "v1"; schemas: FileSchema[]; servers: FileServer[]; tools: FileTool[]; agents: FileAgent[] };

/** Tells the three kinds apart by `schemaVersion`; a file without one is today's agents list. */
export function registryFileKind(raw: unknown): RegistryFileKind | { error: string } {
  if (!isPlainObject(raw) || !Object.hasOwn(raw, "schemaVersion")) return "agents";
  const v = raw["schemaVersion"];
  if (v === "2.0") return "v2";
  if (v === "1.0") return "v1";
  return { error: `schemaVersion ${JSON.stringify(v)?.slice(0, 40)} is not supported: "2.0" (Registry v2) or "1.0" (a v1 gateway file)` };
}

const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/** `deprecated: true | "message"` (tools), or `deprecated: true` with `deprecationMessage` (servers). */
function deprecation(o: Record<string, unknown>): Deprecation {
  const d = o["deprecated"];
  if (typeof d === "string" && d.length > 0) return d;
  if (d !== true) return undefined;
  const m = o["deprecationMessage"];
  return typeof m === "string" && m.length > 0 ? m : "deprecated";
}

export function readRegistryDocument(raw: Record<string, unknown>, kind: "v2" | "v1"): { doc: RegistryDocument; problems: FileProblem[] } {
  const r = new SectionReader(raw);
  if (kind === "v1") r.problems.push({ severity: "warning", code: ProblemCode.V1Format, message: 'a v1 registry file (schemaVersion "1.0"): accepted; write "2.0" with servers to have tool sources checked', path: "schemaVersion" });
  const doc: RegistryDocument = { kind, schemas: readSchemas(r), servers: readServers(r), tools: readTools(r, kind), agents: readAgents(r) };
  return { doc, problems: r.problems };
}

/** What every section's reading shares: the problems found so far, and the checks of an entry's common parts. */
class SectionReader {
  readonly problems: FileProblem[] = [];
  constructor(private readonly raw: Record<string, unknown>) {}

  invalid(path: string, message: string): void {
    this.problems.push({ severity: "error", code: ProblemCode.InvalidEntry, message, path });
  }

  /** A section's entries that are objects, each with its path; a section that is no array, or too long, is refused whole. */
  section(key: string): Array<{ entry: Record<string, unknown>; path: string }> {
    const list = this.raw[key];
    if (list === undefined) return [];
    if (!Array.isArray(list)) {
      this.invalid(key, `${key} must be an array`);
      return [];
    }
    if (list.length > MAX_SECTION_ENTRIES) {
      this.invalid(key, `${list.length} entries; at most ${MAX_SECTION_ENTRIES}`);
      return [];
    }
    const out: Array<{ entry: Record<string, unknown>; path: string }> = [];
    list.forEach((entry: unknown, i) => {
      if (isPlainObject(entry)) out.push({ entry, path: `${key}[${i}]` });
      else this.invalid(`${key}[${i}]`, "entry must be an object");
    });
    return out;
  }

  /** name and version of an entry; versions are exact semver, as every dependency names one. */
  identity(e: Record<string, unknown>, path: string, nameRule?: RegExp): { name: string; version: string } | undefined {
    const name = e["name"];
    const version = e["version"];
    let ok = true;
    if (!isText(name) || (nameRule && !nameRule.test(name))) {
      this.invalid(`${path}.name`, nameRule ? `name must match ${nameRule.source}` : "name must be a non-empty string");
      ok = false;
    }
    if (typeof version !== "string" || !SCHEMA_VERSION_RE.test(version)) {
      this.invalid(`${path}.version`, "version must be an exact semver version (X.Y.Z[-prerelease])");
      ok = false;
    }
    return ok ? { name: name as string, version: version as string } : undefined;
  }

  depends(list: unknown, path: string): FileDependency[] | undefined {
    if (list === undefined) return [];
    if (!Array.isArray(list)) return void this.invalid(path, "depends must be an array");
    if (list.length > MAX_DEPENDS) return void this.invalid(path, `${list.length} dependencies; at most ${MAX_DEPENDS} (an AgentSpec's limit)`);
    const deps: FileDependency[] = [];
    let ok = true;
    list.forEach((d: unknown, j) => {
      const at = `${path}[${j}]`;
      const dep = readDependency(d, at);
      if (typeof dep === "string") {
        this.invalid(at, dep);
        ok = false;
      } else deps.push(dep);
    });
    return ok ? deps : undefined;
  }
}

function readSchemas(r: SectionReader): FileSchema[] {
  const schemas: FileSchema[] = [];
  for (const { entry, path } of r.section("schemas")) {
    const id = r.identity(entry, path, SCHEMA_NAME_RE);
    const description = entry["description"] ?? "";
    // The bound of a `registry.schema.put` description, since the schema is stored as one.
    const goodDescription = typeof description === "string" && description.length <= 4096;
    if (!goodDescription) r.invalid(`${path}.description`, "description must be a string of at most 4096 characters");
    const schema = entry["schema"];
    if (!isPlainObject(schema) && typeof schema !== "boolean") r.invalid(`${path}.schema`, "schema must be a JSON Schema (an object or a boolean)");
    else if (id && goodDescription) schemas.push({ ...id, description: description as string, schema, deprecated: deprecation(entry), path });
  }
  return schemas;
}

function readServers(r: SectionReader): FileServer[] {
  const servers: FileServer[] = [];
  for (const { entry, path } of r.section("servers")) {
    const id = r.identity(entry, path);
    const provides: FileServer["provides"] = [];
    const list = entry["provides"] ?? [];
    let ok = Array.isArray(list);
    if (!Array.isArray(list)) r.invalid(`${path}.provides`, "provides must be an array");
    else
      list.forEach((p: unknown, j) => {
        const tool = isPlainObject(p) ? p["tool"] : undefined;
        if (isText(tool)) provides.push({ tool, path: `${path}.provides[${j}]` });
        else {
          r.invalid(`${path}.provides[${j}]`, 'expected {"tool": name, "version"?}');
          ok = false;
        }
      });
    if (id && ok) servers.push({ ...id, raw: entry, provides, deprecated: deprecation(entry), path });
  }
  return servers;
}

function readTools(r: SectionReader, kind: "v2" | "v1"): FileTool[] {
  const tools: FileTool[] = [];
  for (const { entry, path } of r.section("tools")) {
    // The v1 gateway format has no versions; its tools are taken as 0.0.0 ("unversioned").
    const withVersion = kind === "v1" && entry["version"] === undefined ? { ...entry, version: "0.0.0" } : entry;
    const id = r.identity(withVersion, path);
    const depends = r.depends(entry["depends"], `${path}.depends`);
    const source = entry["source"];
    const spec = entry["spec"];
    let shape: Pick<FileTool, "source" | "spec"> | undefined;
    if ((source === undefined) === (spec === undefined)) r.invalid(path, "a tool has either a source (a passthrough tool) or a spec (a composition), not both and not neither");
    else if (spec !== undefined) {
      if (isPlainObject(spec)) shape = { spec };
      else r.invalid(`${path}.spec`, "spec must be an object (the composition)");
    } else {
      const s = readSource(source);
      if (typeof s === "string") r.invalid(`${path}.source`, s);
      else shape = { source: s };
    }
    if (id && depends && shape) tools.push({ ...id, raw: entry, ...shape, depends, deprecated: deprecation(entry), path });
  }
  return tools;
}

function readAgents(r: SectionReader): FileAgent[] {
  const agents: FileAgent[] = [];
  for (const { entry, path } of r.section("agents")) {
    const id = r.identity(entry, path);
    // `agents[i].sbom.depends[j]`: the j-th entry of the card's urn:agentgateway:sbom extension(s).
    const depends = r.depends(sbomDepends(entry), `${path}.sbom.depends`);
    if (id && depends) agents.push({ ...id, card: entry, depends, deprecated: deprecation(entry), path });
  }
  return agents;
}

function readSource(source: unknown): ToolSource | string {
  if (!isPlainObject(source)) return "source must be an object";
  const out: ToolSource = {};
  for (const key of ["server", "serverVersion", "target", "tool"] as const) {
    const v = source[key];
    if (v === undefined) continue;
    if (!isText(v)) return `source.${key} must be a non-empty string`;
    out[key] = v;
  }
  if (out.server === undefined && out.target === undefined) return "source names a server (source.server) or, in the v1 form, a gateway backend (source.target)";
  return out;
}

/** A dependency as the file writes it (`skill` or `capability` for an agent's skill), or why not. */
function readDependency(d: unknown, path: string): FileDependency | string {
  if (!isPlainObject(d)) return 'expected {"type", "name", "version"}';
  const { type, name, version } = d;
  if (!(DEPENDENCY_TYPES as readonly unknown[]).includes(type)) return `type must be one of ${DEPENDENCY_TYPES.join(", ")}`;
  if (!isText(name)) return "name must be a non-empty string";
  if (typeof version !== "string" || !SCHEMA_VERSION_RE.test(version)) return `${name}: version must be an exact semver version (dependencies name one version)`;
  const capability = d["capability"] ?? d["skill"];
  if (capability !== undefined && !isText(capability)) return "skill must be a non-empty string";
  return { type: type as FileDependency["type"], name, version, ...(capability === undefined ? {} : { capability: capability as string }), path };
}

/** The `depends` lists of a card's sbom extensions, joined (undefined when there is none). */
function sbomDepends(card: Record<string, unknown>): unknown {
  const caps = card["capabilities"];
  const extensions = isPlainObject(caps) ? caps["extensions"] : undefined;
  if (!Array.isArray(extensions)) return undefined;
  const all: unknown[] = [];
  for (const ext of extensions) {
    if (!isPlainObject(ext) || ext["uri"] !== SBOM_EXTENSION_URI) continue;
    const params = ext["params"];
    const list = isPlainObject(params) ? params["depends"] : undefined;
    if (!Array.isArray(list)) return "not a list";
    all.push(...(list as unknown[]));
  }
  return all;
}
