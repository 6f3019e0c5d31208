/**
 * The Registry v2 startup rules across a file's entries (PROTOCOL.md sections 11.2 and 11.3).
 * Errors: a `#Name:Version` ref to no schema of the file (`unresolved_ref`), a tool whose
 * `source.server` names no server of the file (`missing_server`), a `depends` entry naming
 * nothing in the file (`missing`), a dependency cycle (`cycle`, also among schemas' refs), the
 * same `(name, version)` twice or one registry entry name used twice (`duplicate`). Warnings:
 * a deprecated entity in use, a schema nothing refers to, a server `provides` entry no tool
 * serves. Every problem is listed, each with its path; nothing stops at the first.
 *
 * A v1-style `source.target` names a gateway backend, which the file does not describe, so it
 * is not checked.
 */
import { isPlainObject } from "../spec.js";
import { findRefs, refKey } from "../../schemas/schema-refs.js";
import type { FileDependency, FileTool, RegistryDocument } from "./document.js";
import { ProblemCode, type FileProblem } from "./problems.js";

const at = (base: string, inner: string): string => (inner ? `${base}.${inner}` : base);
const nodeId = (type: string, name: string, version: string): string => `${type}:${name}@${version}`;

/** Where the checks put what they find. */
type Report = {
  error: (code: ProblemCode, path: string, message: string) => void;
  warn: (code: ProblemCode, path: string, message: string, entry?: string) => void;
};

/** The registry entry a tool ends up in: its own for a composition, its server's for a passthrough tool. */
const entryOf = (t: FileTool): string | undefined => (t.spec !== undefined ? t.name : (t.source?.server ?? t.source?.target));

export function checkRegistryDocument(doc: RegistryDocument): FileProblem[] {
  const problems: FileProblem[] = [];
  const report: Report = {
    error: (code, path, message) => void problems.push({ severity: "error", code, message, path }),
    warn: (code, path, message, entry) => void problems.push({ severity: "warning", code, message, path, ...(entry === undefined ? {} : { entry }) }),
  };
  checkDuplicates(doc, report.error);
  checkSchemaRefs(doc, report);
  checkToolSources(doc, report);
  checkDependencies(doc, report);
  return problems;
}

/** Schema refs: every schema position of tools, agents' skills and the schemas themselves; unused schemas; ref cycles. */
function checkSchemaRefs(doc: RegistryDocument, { error, warn }: Report): void {
  const schemas = new Map(doc.schemas.map((s) => [refKey(s.name, s.version), s]));
  const used = new Set<string>();
  const schemaEdges = new Map<string, string[]>();
  const walk = (schema: unknown, path: string, from?: string, owner?: string): void => {
    const { refs, problems: bad } = findRefs(schema);
    for (const b of bad) error(ProblemCode.UnresolvedRef, at(path, b.path), b.message);
    for (const r of refs) {
      const key = refKey(r.name, r.version);
      const target = schemas.get(key);
      if (!target) {
        error(ProblemCode.UnresolvedRef, at(path, r.path), `$ref "#${key}" names no schema of the file`);
        continue;
      }
      used.add(key);
      if (from !== undefined) schemaEdges.set(from, [...(schemaEdges.get(from) ?? []), key]);
      if (target.deprecated && from === undefined) warn(ProblemCode.Deprecated, at(path, r.path), `schema ${key} is deprecated: ${target.deprecated}`, owner);
    }
  };
  for (const s of doc.schemas) walk(s.schema, `${s.path}.schema`, refKey(s.name, s.version));
  for (const t of doc.tools) for (const k of ["inputSchema", "outputSchema"]) if (t.raw[k] !== undefined) walk(t.raw[k], `${t.path}.${k}`, undefined, entryOf(t));
  for (const a of doc.agents) {
    const skills = a.card["skills"];
    if (!Array.isArray(skills)) continue;
    skills.forEach((skill: unknown, j) => {
      if (!isPlainObject(skill)) return;
      for (const k of ["inputSchema", "outputSchema"]) if (skill[k] !== undefined) walk(skill[k], `${a.path}.skills[${j}].${k}`, undefined, a.name);
    });
  }
  // A schema is used when a tool or skill refers to it, directly or through other schemas.
  const stack = [...used];
  while (stack.length > 0) {
    for (const next of schemaEdges.get(stack.pop()!) ?? []) {
      if (used.has(next)) continue;
      used.add(next);
      stack.push(next);
    }
  }
  for (const s of doc.schemas) {
    const key = refKey(s.name, s.version);
    if (!used.has(key)) warn(ProblemCode.UnusedSchema, s.path, `schema ${key} is not used by any tool or agent of the file`);
  }
  for (const cycle of findCycles(schemaEdges)) {
    const s = schemas.get(cycle[0]!)!;
    error(ProblemCode.Cycle, `${s.path}.schema`, `schema ref cycle: ${cycle.map((k) => `#${k}`).join(" -> ")}`);
  }
}

/** Tool sources, and what each server's provides list promises. */
function checkToolSources(doc: RegistryDocument, { error, warn }: Report): void {
  const servers = new Map(doc.servers.map((s) => [s.name, s]));
  for (const t of doc.tools) {
    const server = t.source?.server;
    if (server === undefined) continue;
    const s = servers.get(server);
    if (!s) error(ProblemCode.MissingServer, `${t.path}.source.server`, `tool ${t.name} names server "${server}", which the file does not describe`);
    else if (t.source?.serverVersion !== undefined && t.source.serverVersion !== s.version) {
      error(ProblemCode.MissingServer, `${t.path}.source.serverVersion`, `tool ${t.name} names ${server} ${t.source.serverVersion}; the file describes ${server} ${s.version}`);
    } else if (s.deprecated) warn(ProblemCode.Deprecated, `${t.path}.source.server`, `tool ${t.name} uses server ${server}, which is deprecated: ${s.deprecated}`, server);
  }
  for (const s of doc.servers) {
    for (const p of s.provides) {
      const served = doc.tools.some((t) => t.source?.server === s.name && (t.source.tool ?? t.name) === p.tool);
      if (!served) warn(ProblemCode.DanglingProvides, p.path, `server ${s.name} provides "${p.tool}", but no tool of the file has it as source`, s.name);
    }
  }
}

/** Dependencies: each names an entry of the file, exactly; then no cycle among them. */
function checkDependencies(doc: RegistryDocument, { error, warn }: Report): void {
  const entries = new Map<string, { deprecated: string | undefined }>();
  for (const t of doc.tools) entries.set(nodeId("tool", t.name, t.version), t);
  for (const a of doc.agents) entries.set(nodeId("agent", a.name, a.version), a);
  for (const s of doc.servers) entries.set(nodeId("mcp_server", s.name, s.version), s);
  const depEdges = new Map<string, string[]>();
  const dependents: Array<{ id: string; depends: FileDependency[]; entry: string | undefined }> = [
    ...doc.tools.map((t: FileTool) => ({ id: nodeId("tool", t.name, t.version), depends: t.depends, entry: entryOf(t) })),
    ...doc.agents.map((a) => ({ id: nodeId("agent", a.name, a.version), depends: a.depends, entry: a.name })),
  ];
  const pathOf = new Map<string, string>();
  for (const { id, depends, entry: owner } of dependents) {
    for (const d of depends) {
      const target = nodeId(d.type, d.name, d.version);
      const entry = entries.get(target);
      if (!entry) {
        const others = [...entries.keys()].filter((k) => k.startsWith(`${d.type}:${d.name}@`)).map((k) => k.slice(k.indexOf("@") + 1));
        const hint = others.length > 0 ? ` (the file has version ${others.join(", ")})` : "";
        error(ProblemCode.Missing, d.path, `${id} depends on ${target}, which the file does not describe${hint}`);
        continue;
      }
      if (entry.deprecated) warn(ProblemCode.Deprecated, d.path, `${id} depends on ${target}, which is deprecated: ${entry.deprecated}`, owner);
      depEdges.set(id, [...(depEdges.get(id) ?? []), target]);
      if (!pathOf.has(id)) pathOf.set(id, d.path.slice(0, d.path.lastIndexOf("[")));
    }
  }
  for (const cycle of findCycles(depEdges)) error(ProblemCode.Cycle, pathOf.get(cycle[0]!) ?? "", `dependency cycle: ${cycle.join(" -> ")}`);
}

/**
 * `duplicate`: the same `(name, version)` twice in a section, and one registry entry name
 * (an agent_type: servers, compositions and agents share them) used by two entries, whatever
 * their versions, since an agent type holds one spec. Passthrough tools become capabilities of
 * their server, so two of one name on one server clash too.
 */
function checkDuplicates(doc: RegistryDocument, error: (code: ProblemCode, path: string, message: string) => void): void {
  const sections: Array<[string, Array<{ name: string; version: string; path: string }>]> = [
    ["schema", doc.schemas],
    ["server", doc.servers],
    ["tool", doc.tools],
    ["agent", doc.agents],
  ];
  for (const [what, list] of sections) {
    const first = new Map<string, string>();
    for (const e of list) {
      const key = `${e.name}@${e.version}`;
      const seen = first.get(key);
      if (seen !== undefined) error(ProblemCode.Duplicate, e.path, `${what} ${key} is also ${seen}`);
      else first.set(key, e.path);
    }
  }
  const names = new Map<string, string>();
  const claim = (name: string, path: string, what: string): void => {
    const seen = names.get(name);
    if (seen !== undefined) error(ProblemCode.Duplicate, path, `${what} "${name}" would be the registry entry of the same name as ${seen}`);
    else names.set(name, path);
  };
  // Only the first entry of a (name, version) claims its name: a repeat is already reported above.
  const pairs = new Set<string>();
  const first = (key: string): boolean => {
    if (pairs.has(key)) return false;
    pairs.add(key);
    return true;
  };
  const byServer = new Map<string, string>();
  for (const s of doc.servers) if (first(`server ${s.name}@${s.version}`)) claim(s.name, s.path, "server");
  for (const t of doc.tools) {
    const isNew = first(`tool ${t.name}@${t.version}`);
    if (t.spec !== undefined) {
      if (isNew) claim(t.name, t.path, "composite tool");
      continue;
    }
    const owner = t.source?.server ?? t.source?.target ?? "";
    const key = `${owner}\u0000${t.name}`;
    const seen = byServer.get(key);
    if (seen === undefined) byServer.set(key, t.path);
    else if (isNew) error(ProblemCode.Duplicate, t.path, `tool "${t.name}" of ${owner} is also ${seen} (one capability per tool name on a server)`);
  }
  for (const a of doc.agents) if (first(`agent ${a.name}@${a.version}`)) claim(a.name, a.path, "agent");
}

/** Every elementary cycle found by a depth-first walk, each once, starting at its first node met. */
export function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const seen = new Set<string>();
  for (const start of edges.keys()) {
    if (state.has(start)) continue;
    // Iterative DFS: a file's entries are untrusted and a long chain must not overflow the stack.
    const path: string[] = [];
    const frames: Array<{ node: string; next: number }> = [{ node: start, next: 0 }];
    state.set(start, "open");
    path.push(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const targets = edges.get(frame.node) ?? [];
      if (frame.next >= targets.length) {
        state.set(frame.node, "done");
        frames.pop();
        path.pop();
        continue;
      }
      const next = targets[frame.next++]!;
      const s = state.get(next);
      if (s === "open") {
        const cycle = [...path.slice(path.indexOf(next)), next];
        const key = [...cycle.slice(0, -1)].sort().join("\u0000");
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push(cycle);
        }
      } else if (s === undefined) {
        state.set(next, "open");
        path.push(next);
        frames.push({ node: next, next: 0 });
      }
    }
  }
  return cycles;
}
