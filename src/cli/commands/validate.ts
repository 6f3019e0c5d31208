/**
 * `validate FILE`: checks, offline, any document `register` takes (an AgentSpec, a register
 * body, a bare A2A card or MCP tools/list result; registration-document.ts tells them apart)
 * or a static registry file (today's agents list or a Registry v2/v1 document, with its v2
 * startup errors and warnings), printing every problem with its path so the whole file can be
 * fixed in one pass. A registration is judged by the service's own register path
 * (registration-check.ts), so a file that validates here is one the registry accepts, as far
 * as the file alone can tell.
 *
 * A bare card or tool spec names no agent_type, yet the spec built from it needs one (its
 * default nats_subject and consumer_group come from it). Without --agent-type, validate takes
 * the file name up to its first dot, so `validate invoice-reader.card.json` just works and the
 * summary line shows the name it used; `register` requires the flag, since there the name is
 * the agent's identity.
 */
import { basename } from "node:path";
import { checkAnyRegistryFile, formatProblem } from "../../domain/spec/registry-v2/index.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { ExitCode, UsageError, type Command, type Values } from "../context.js";
import { REGISTRATION_OPTIONS, registrationFlags, registrationOf, type Registration } from "../registration-body.js";
import { checkRegistration, checkSpec, type RegistrationCheck, type SpecCheck } from "../registration-check.js";
import { DOCUMENT_LABELS, detectDocument, loadDocument, type DocumentKind } from "../registration-document.js";

/** The agent_type validate assumes for a file that names none: its name up to the first dot, lower-cased. */
export function agentTypeFromFileName(file: string): string {
  const name = basename(file).split(".")[0]!.toLowerCase();
  if (!AGENT_TYPE_RE.test(name)) throw new UsageError(`${file} names no agent_type, and "${name}" (its file name) is not one: pass --agent-type NAME`);
  return name;
}

/**
 * A registry file of any kind. Today's agents list: its rules, then each entry as the service
 * registers it. A Registry v2 (or v1) file: the v2 startup rules, each problem with its path
 * (`tools[3].source.server: missing_server: ...`), warnings too; then each entry's AgentSpec.
 */
export function checkRegistryFile(value: Record<string, unknown>): SpecCheck {
  const r = checkAnyRegistryFile(value);
  const warnings = r.warnings.map(formatProblem);
  if (!r.ok) return { ok: false, errors: r.errors, warnings, summary: `${r.errors.length} error(s)` };
  // Each entry as the service will register it: the file's rules passed, the AgentSpec rules follow.
  const where = r.kind === "agents" ? (i: number) => `agents.${i}` : (i: number) => r.specs[i]!.agent_type;
  const errors = r.specs.flatMap((spec, i) => checkSpec(spec).errors.map((e) => `${where(i)}: ${e}`));
  if (errors.length > 0) return { ok: false, errors, warnings, summary: `${errors.length} error(s)` };
  if (r.kind === "agents") return { ok: true, errors: [], warnings, summary: `registry file with ${r.specs.length} agent(s)` };
  const count = (kind: string) => r.specs.filter((s) => (s.kind ?? "agent") === kind).length;
  const what = `${r.kind === "v2" ? "Registry v2" : "v1 registry"} file with ${r.schemas.length} schema(s), ${count("mcp_server")} server(s), ${count("tool")} composite tool(s), ${count("agent")} agent(s)`;
  return { ok: true, errors: [], warnings, summary: `${what}, ${warnings.length} warning(s)` };
}

/** The summary of a registration that passed: what the file was, then the spec it registers as. */
function summaryOf(reg: Registration, check: RegistrationCheck): string {
  if (!check.ok || reg.kind === "agent_spec") return check.summary;
  const a2a = check.a2aVersion === undefined ? "" : ` v${check.a2aVersion}`;
  const what = reg.kind === "register_body" ? `register body with ${reg.source}${check.a2aVersion === undefined ? "" : ` (A2A${a2a})`}` : `${DOCUMENT_LABELS[reg.kind]}${a2a}`;
  return `${what} as ${check.summary}`;
}

type Outcome = RegistrationCheck & { kind: DocumentKind | undefined; agentType?: string | undefined };

function validateFile(file: string, values: Values): Outcome {
  const loaded = loadDocument(file);
  if (!loaded.ok) return { kind: undefined, ok: false, errors: loaded.errors, warnings: [], summary: "unreadable" };
  const doc = detectDocument(loaded.value);
  if (!doc.ok) return { kind: undefined, ok: false, errors: doc.errors, warnings: [], summary: "not recognised" };
  const flags = registrationFlags(values);
  if (doc.kind === "registry_file") {
    if (Object.values(flags).some((v) => v !== undefined)) throw new UsageError("a registry file names its agents itself: --agent-type and the card and tool spec flags do not apply");
    return { kind: doc.kind, ...checkRegistryFile(doc.value) };
  }
  const reg = registrationOf(doc, flags, () => agentTypeFromFileName(file));
  const check = checkRegistration(reg.agentType, reg.body);
  return { kind: doc.kind, agentType: reg.agentType, ...check, summary: summaryOf(reg, check) };
}

export const validateCommand: Command = {
  name: "validate",
  summary: "check an AgentSpec, an A2A card, an MCP tools/list or server.json file, a register body or a registry file (JSON or YAML), offline",
  usage: "validate FILE [--agent-type NAME] [--strict] [--description TEXT] [--spec-version X.Y.Z] [--nats-subject SUBJECT] [--owner-team TEAM]",
  examples: [
    "agent-registry validate examples/summarizer.yaml",
    "agent-registry validate deploy/config/agent-registry.json --json",
    "agent-registry validate invoice-reader.card.json --strict",
    "agent-registry validate tools.json --agent-type notes --description 'Notes vault' --spec-version 1.0.0",
  ],
  options: REGISTRATION_OPTIONS,
  args: { min: 1, max: 1 },
  async run(ctx) {
    const file = ctx.args[0] ?? "";
    const result = validateFile(file, ctx.values);
    if (ctx.json) {
      const extra = { ...(result.agentType !== undefined ? { agent_type: result.agentType } : {}), ...(result.a2aVersion ? { a2a_version: result.a2aVersion } : {}) };
      ctx.printJson({ file, kind: result.kind ?? null, ok: result.ok, ...extra, errors: result.errors, warnings: result.warnings });
    } else {
      const c = ctx.colors;
      for (const w of result.warnings) ctx.io.stderr(`${c.yellow("warning:")} ${w}\n`);
      for (const e of result.errors) ctx.io.stderr(`${c.red("error:")} ${e}\n`);
      ctx.out(`${file}: ${result.ok ? c.green("ok") : c.red("invalid")}, ${result.summary}`);
    }
    return result.ok ? ExitCode.Ok : ExitCode.Error;
  },
};
