/**
 * `validate FILE`: checks an AgentSpec document or a static registry file offline, printing
 * every problem with its path so the whole file can be fixed in one pass.
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { parseSpecDocument, validateRegistryFile } from "../../domain/registry-file.js";
import { agentSpecSchema, unknownSpecFields } from "../../domain/spec.js";
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

export function checkSpec(value: Record<string, unknown>): SpecCheck {
  const parsed = agentSpecSchema.safeParse(value);
  const warnings = unknownSpecFields(value).map((f) => `${f.replace(/^spec\./, "")}: not an AgentSpec field (the registry drops it)`);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join(".") : "(root)"}: ${i.message}`);
    return { ok: false, errors, warnings, summary: `${errors.length} error(s)` };
  }
  return { ok: true, errors: [], warnings, summary: `AgentSpec ${parsed.data.agent_type} ${parsed.data.version}` };
}

export function checkDocument(value: Record<string, unknown>): SpecCheck & { kind: "agent_spec" | "registry_file" } {
  if (!isRegistryFile(value)) return { kind: "agent_spec", ...checkSpec(value) };
  const r = validateRegistryFile(value);
  return r.ok
    ? { kind: "registry_file", ok: true, errors: [], warnings: [], summary: `registry file with ${r.specs.length} agent(s)` }
    : { kind: "registry_file", ok: false, errors: r.errors, warnings: [], summary: `${r.errors.length} error(s)` };
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
