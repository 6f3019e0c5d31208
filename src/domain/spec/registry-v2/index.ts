/**
 * Registry v2 registry files (PROTOCOL.md section 11.3): read (document.ts), checked with the
 * startup rules (checks.ts), mapped to what the registry stores (mapping.ts). A file is usable
 * only without errors; warnings come back either way, for the caller to log and report.
 */
import { validateRegistryFile } from "../registry-file.js";
import { isPlainObject, type AgentSpecInput } from "../spec.js";
import { checkRegistryDocument } from "./checks.js";
import { readRegistryDocument, registryFileKind, type RegistryFileKind } from "./document.js";
import { mapRegistryDocument, type MappedDocument, type MappingOptions } from "./mapping.js";
import { formatProblem, type FileProblem } from "./problems.js";
import type { FileSchemaPut } from "./mapping.js";

export { registryFileKind, type RegistryFileKind } from "./document.js";
export { ProblemCode, formatProblem, type FileProblem } from "./problems.js";
export type { FileSchemaPut, MappedDocument, MappedEntry, MappingOptions } from "./mapping.js";

export type RegistryV2Result =
  | ({ ok: true; kind: "v2" | "v1"; warnings: FileProblem[] } & MappedDocument)
  | { ok: false; kind: "v2" | "v1"; errors: FileProblem[]; warnings: FileProblem[] };

export function loadRegistryV2(raw: Record<string, unknown>, kind: "v2" | "v1", options: MappingOptions = {}): RegistryV2Result {
  const { doc, problems } = readRegistryDocument(raw, kind);
  problems.push(...checkRegistryDocument(doc));
  const { mapped, problems: mapping } = mapRegistryDocument(doc, options);
  problems.push(...mapping);
  const errors = problems.filter((p) => p.severity === "error");
  const warnings = problems.filter((p) => p.severity === "warning");
  return errors.length > 0 ? { ok: false, kind, errors, warnings } : { ok: true, kind, warnings, ...mapped };
}

/** A registry file of any kind, checked by its own rules: what the service loads and the CLI validates. */
export type CheckedRegistryFile =
  | { ok: true; kind: RegistryFileKind; schemas: FileSchemaPut[]; specs: AgentSpecInput[]; warnings: FileProblem[] }
  | { ok: false; kind: RegistryFileKind | undefined; errors: string[]; warnings: FileProblem[] };

/**
 * Today's list of agents (registry-file.ts) or a v2/v1 document, told apart by `schemaVersion`.
 * Errors are lines naming their path (`tools[3].source.server: missing_server: ...`).
 */
export function checkAnyRegistryFile(raw: unknown, options: MappingOptions = {}): CheckedRegistryFile {
  const kind = registryFileKind(raw);
  if (typeof kind === "object") return { ok: false, kind: undefined, errors: [kind.error], warnings: [] };
  if (kind === "agents") {
    const r = validateRegistryFile(raw);
    return r.ok ? { ok: true, kind, schemas: [], specs: r.specs, warnings: [] } : { ok: false, kind, errors: r.errors, warnings: [] };
  }
  const r = loadRegistryV2(isPlainObject(raw) ? raw : {}, kind, options);
  if (!r.ok) return { ok: false, kind, errors: r.errors.map(formatProblem), warnings: r.warnings };
  return { ok: true, kind, schemas: r.schemas, specs: r.entries.map((e) => e.spec), warnings: r.warnings };
}
