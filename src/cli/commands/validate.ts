/**
 * `validate FILE`: checks an AgentSpec document or a static registry file offline, printing
 * every problem with its path so the whole file can be fixed in one pass. The rules are the
 * service's own (domain/spec/validation.ts, with the same schema checker), so a spec that
 * validates here is one the registry accepts, as far as the spec alone can tell.
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { parseSpecDocument } from "../../adapters/file/documents.js";
import { isRegistryError } from "../../domain/errors.js";
import { validateRegistryFile } from "../../domain/spec/registry-file.js";
import { SchemaChecker } from "../../domain/spec/schema-check.js";
import { unknownSpecFields } from "../../domain/spec/spec.js";
import { validateSpec } from "../../domain/spec/validation.js";
import { ExitCode, type Command } from "../context.js";

export type LoadedDocument = { ok: true; value: Record<string, unknown> } | { ok: false; errors: string[] };

/** Reads a JSON or YAML document; the extension picks the parser (YAML also reads JSON). */
export function loadDocument(path: string): LoadedDocument {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return { ok: false, errors: [`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`] };
  }
  return parseSpecDocument(text, extname(path).toLowerCase() === ".json" ? "json" : "yaml");
}

/** A registry file has an `agents` list; anything else is taken for one AgentSpec. */
export const isRegistryFile = (value: Record<string, unknown>): boolean => "agents" in value && !("agent_type" in value);

export type SpecCheck = { ok: boolean; errors: string[]; warnings: string[]; summary: string };

let checker: SchemaChecker | undefined;

export function checkSpec(value: Record<string, unknown>): SpecCheck {
  const warnings = unknownSpecFields(value).map((f) => `${f.replace(/^spec\./, "")}: not an AgentSpec field (the registry drops it)`);
  try {
    const { spec } = validateSpec(value, (checker ??= new SchemaChecker()), Number.POSITIVE_INFINITY);
    return { ok: true, errors: [], warnings, summary: `AgentSpec ${spec.agent_type} ${spec.version}` };
  } catch (e) {
    if (!isRegistryError(e)) throw e;
    const errors = (e.issues ?? [{ path: "", message: e.message }]).map((i) => `${i.path || "(root)"}: ${i.message}`);
    return { ok: false, errors, warnings, summary: `${errors.length} error(s)` };
  }
}

export function checkDocument(value: Record<string, unknown>): SpecCheck & { kind: "agent_spec" | "registry_file" } {
  if (!isRegistryFile(value)) return { kind: "agent_spec", ...checkSpec(value) };
  const r = validateRegistryFile(value);
  if (!r.ok) return { kind: "registry_file", ok: false, errors: r.errors, warnings: [], summary: `${r.errors.length} error(s)` };
  // Each entry as the service will register it: the file's rules passed, the AgentSpec rules follow.
  const errors = r.specs.flatMap((spec, i) => checkSpec(spec as Record<string, unknown>).errors.map((e) => `agents.${i}: ${e}`));
  return errors.length === 0
    ? { kind: "registry_file", ok: true, errors: [], warnings: [], summary: `registry file with ${r.specs.length} agent(s)` }
    : { kind: "registry_file", ok: false, errors, warnings: [], summary: `${errors.length} error(s)` };
}

export const validateCommand: Command = {
  name: "validate",
  summary: "check an AgentSpec (JSON or YAML) or a static registry file, offline",
  usage: "validate FILE",
  examples: ["agent-registry validate examples/summarizer.yaml", "agent-registry validate deploy/config/agent-registry.json --json"],
  options: {},
  args: { min: 1, max: 1 },
  async run(ctx) {
    const file = ctx.args[0] ?? "";
    const doc = loadDocument(file);
    const result = doc.ok ? checkDocument(doc.value) : { kind: undefined, ok: false, errors: doc.errors, warnings: [], summary: "unreadable" };
    if (ctx.json) ctx.printJson({ file, kind: result.kind ?? null, ok: result.ok, errors: result.errors, warnings: result.warnings });
    else {
      const c = ctx.colors;
      for (const w of result.warnings) ctx.io.stderr(`${c.yellow("warning:")} ${w}\n`);
      for (const e of result.errors) ctx.io.stderr(`${c.red("error:")} ${e}\n`);
      ctx.out(`${file}: ${result.ok ? c.green("ok") : c.red("invalid")}, ${result.summary}`);
    }
    return result.ok ? ExitCode.Ok : ExitCode.Error;
  },
};
