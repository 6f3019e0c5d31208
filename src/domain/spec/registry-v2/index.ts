/**
 * Registry v2 registry files (PROTOCOL.md section 11.3): read (document.ts), checked with the
 * startup rules (checks.ts), mapped to what the registry stores (mapping.ts). A file is usable
 * only without errors; warnings come back either way, for the caller to log and report.
 */
import { checkRegistryDocument } from "./checks.js";
import { readRegistryDocument } from "./document.js";
import { mapRegistryDocument, type MappedDocument } from "./mapping.js";
import type { FileProblem } from "./problems.js";

export { registryFileKind, type RegistryFileKind } from "./document.js";
export { ProblemCode, formatProblem, type FileProblem } from "./problems.js";
export type { FileSchemaPut, MappedDocument, MappedEntry } from "./mapping.js";

export type RegistryV2Result =
  | ({ ok: true; kind: "v2" | "v1"; warnings: FileProblem[] } & MappedDocument)
  | { ok: false; kind: "v2" | "v1"; errors: FileProblem[]; warnings: FileProblem[] };

export function loadRegistryV2(raw: Record<string, unknown>, kind: "v2" | "v1"): RegistryV2Result {
  const { doc, problems } = readRegistryDocument(raw, kind);
  problems.push(...checkRegistryDocument(doc));
  const { mapped, problems: mapping } = mapRegistryDocument(doc);
  problems.push(...mapping);
  const errors = problems.filter((p) => p.severity === "error");
  const warnings = problems.filter((p) => p.severity === "warning");
  return errors.length > 0 ? { ok: false, kind, errors, warnings } : { ok: true, kind, warnings, ...mapped };
}
