/**
 * Decodes the documents an operator writes (an AgentSpec or a registry file, in JSON or YAML)
 * into plain objects. Decoding only: the AgentSpec and registry-file rules are checked by the
 * domain (domain/spec/), in one place for the CLI and the service.
 */
import { parseDocument } from "yaml";
import { isPlainObject } from "../domain/spec/spec.js";

export type SpecDocumentResult = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };

/**
 * Parses one AgentSpec document (JSON or YAML) into the raw object that the register
 * request carries; the AgentSpec rules are checked later, by the registry, in one place.
 */
export function parseSpecDocument(text: string, kind: "json" | "yaml"): SpecDocumentResult {
  const source = text.replace(/^\uFEFF/, "");
  let value: unknown;
  if (kind === "json") {
    try {
      value = JSON.parse(source);
    } catch (e) {
      return { ok: false, errors: [`invalid JSON: ${(e as Error).message}`] };
    }
  } else {
    const doc = parseDocument(source, { uniqueKeys: true });
    if (doc.errors.length > 0) {
      // yaml's messages carry a multi-line excerpt; the first line names the problem and position.
      return { ok: false, errors: doc.errors.map((e) => `invalid YAML: ${(e.message.split("\n")[0] ?? "").replace(/:$/, "")}`) };
    }
    value = doc.toJS({ maxAliasCount: 100 });
  }
  if (!isPlainObject(value)) return { ok: false, errors: ["a spec document must be an object (a mapping of AgentSpec fields)"] };
  return { ok: true, value };
}
