/**
 * The register body (PROTOCOL.md sections 2, 10.1, 10.2) that a detected document becomes
 * once the command line's flags complete it: `{spec}`, `{agent_type, a2a_card, ...}`,
 * `{agent_type, mcp_toolspec, description, version, ...}` or `{agent_type, mcp_server, ...}`. `register` sends it and `validate`
 * checks it, so both judge the very same body.
 *
 * One rule for every flag: it may complete the file, never contradict it. A flag that quietly
 * won over the file would hide a mistake, which is also why the service refuses the fields of
 * a card or a tool spec beside `spec`: here such a flag is a usage error.
 */
import type { SpecSource } from "../domain/interop/register-body.js";
import { isPlainObject } from "../domain/spec/spec.js";
import { AGENT_TYPE_RE } from "../protocol/ids.js";
import { UsageError, keyValues, positiveInt, str, strs, type OptionSpec, type Values } from "./context.js";
import { DOCUMENT_LABELS, type DocumentKind, type RegistrationDocument } from "./registration-document.js";

export type RegistrationFlags = {
  agentType?: string | undefined;
  strict?: boolean | undefined;
  description?: string | undefined;
  specVersion?: string | undefined;
  natsSubject?: string | undefined;
  ownerTeam?: string | undefined;
  instanceId?: string | undefined;
  heartbeatIntervalMs?: number | undefined;
  status?: "ready" | "registered" | undefined;
  metadata?: Record<string, string> | undefined;
  replace?: boolean | undefined;
};
type FlagName = keyof RegistrationFlags;

/** The body field each flag fills, and the flag as it is typed. */
const FLAGS: Readonly<Record<FlagName, { field: string; flag: string }>> = {
  agentType: { field: "agent_type", flag: "--agent-type" },
  strict: { field: "strict", flag: "--strict" },
  description: { field: "description", flag: "--description" },
  specVersion: { field: "version", flag: "--spec-version" },
  natsSubject: { field: "nats_subject", flag: "--nats-subject" },
  ownerTeam: { field: "owner_team", flag: "--owner-team" },
  instanceId: { field: "instance_id", flag: "--instance-id" },
  heartbeatIntervalMs: { field: "heartbeat_interval_ms", flag: "--interval" },
  status: { field: "status", flag: "--status" },
  metadata: { field: "metadata", flag: "--metadata" },
  replace: { field: "replace", flag: "--replace" },
};

/** Flags for fields of one instance's registration, which go beside any of the three forms (PROTOCOL.md section 2). */
const INSTANCE_FLAGS: readonly FlagName[] = ["instanceId", "heartbeatIntervalMs", "status", "metadata", "replace"];

/** The flags that complete each form (PROTOCOL.md 10.1 and 10.2); a spec names everything itself. */
const FORM_FLAGS: Readonly<Record<SpecSource, readonly FlagName[]>> = {
  spec: [],
  a2a_card: ["strict", "natsSubject", "ownerTeam"],
  mcp_toolspec: ["description", "specVersion", "natsSubject", "ownerTeam"],
  mcp_server: ["natsSubject", "ownerTeam"],
};
const FORM_NAMES: Readonly<Record<SpecSource, string>> = {
  spec: "an AgentSpec",
  a2a_card: "an A2A card",
  mcp_toolspec: "an MCP tool spec",
  mcp_server: "an MCP server.json",
};

/** The options `register` and `validate` share: what a card or a tool spec needs beside the file. */
export const REGISTRATION_OPTIONS: Record<string, OptionSpec> = {
  "agent-type": {
    type: "string",
    value: "NAME",
    description: "agent_type to register as: required for a bare A2A card or MCP tool spec (a server.json's default: its name after the /), and must match the file when it names one",
  },
  strict: { type: "boolean", description: "A2A cards: refuse any deviation from the card's A2A schema (invalid_card) instead of warning" },
  description: { type: "string", value: "TEXT", description: "MCP tool specs: the description (required for a bare tools/list file)" },
  "spec-version": { type: "string", value: "X.Y.Z", description: "MCP tool specs: the version (required for a bare tools/list file)" },
  "nats-subject": { type: "string", value: "SUBJECT", description: "A2A cards, MCP tool specs and server.json: the task subject (default agent.tasks.NAME, mcp.tools.NAME)" },
  "owner-team": { type: "string", value: "TEAM", description: "A2A cards, MCP tool specs and server.json: the owning team (default: the card's provider, else unknown)" },
};

/** The flags of REGISTRATION_OPTIONS as given on the command line. */
export function registrationFlags(values: Values): RegistrationFlags {
  return {
    agentType: str(values["agent-type"]),
    strict: values["strict"] === true ? true : undefined,
    description: str(values["description"]),
    specVersion: str(values["spec-version"]),
    natsSubject: str(values["nats-subject"]),
    ownerTeam: str(values["owner-team"]),
  };
}

/** `register`'s flags for the instance (--instance-id, --interval, --status, --metadata, --replace). */
export function instanceFlags(values: Values): RegistrationFlags {
  const status = str(values["status"]);
  if (status !== undefined && status !== "ready" && status !== "registered") throw new UsageError(`--status: expected ready or registered, got "${status}"`);
  const metadata = strs(values["metadata"]);
  return {
    instanceId: str(values["instance-id"]),
    heartbeatIntervalMs: positiveInt("interval", values["interval"]),
    status,
    metadata: metadata.length > 0 ? keyValues("metadata", metadata) : undefined,
    replace: values["replace"] === true ? true : undefined,
  };
}

export type Registration = {
  /** The agent_type of the register subject; undefined for a spec that names none (its validation says so). */
  agentType: string | undefined;
  body: Record<string, unknown>;
  source: SpecSource;
  kind: DocumentKind;
};

/**
 * The register body of a document and its flags. `defaultAgentType` is asked when neither the
 * document nor --agent-type names the agent_type of a card or tool spec (`validate` derives one
 * from the file name); without it that is a usage error.
 */
export function registrationOf(doc: RegistrationDocument, flags: RegistrationFlags, defaultAgentType?: () => string): Registration {
  if (doc.kind === "registry_file") throw new UsageError("a registry file holds many agents; the service loads it (REGISTRY_FILE), register takes one");
  const source: SpecSource = doc.kind === "register_body" ? doc.source : doc.kind === "agent_spec" ? "spec" : doc.kind;
  const body: Record<string, unknown> = doc.kind === "register_body" ? { ...doc.value } : { [source]: doc.value };
  const label = DOCUMENT_LABELS[doc.kind];

  for (const name of Object.keys(flags) as FlagName[]) {
    if (flags[name] === undefined || name === "agentType" || INSTANCE_FLAGS.includes(name) || FORM_FLAGS[source].includes(name)) continue;
    const fits = (Object.keys(FORM_FLAGS) as SpecSource[]).filter((s) => FORM_FLAGS[s].includes(name)).map((s) => FORM_NAMES[s]);
    // Every such flag but --strict names a spec field, which a spec sets itself.
    const hint = source === "spec" && name !== "strict" ? `; set ${FLAGS[name].field} in the spec` : "";
    const forms = fits.length > 1 ? `${fits.slice(0, -1).join(", ")} or ${fits.at(-1)!}` : fits.join("");
    throw new UsageError(`${FLAGS[name].flag} completes ${forms}, and this file is ${FORM_NAMES[source]}${hint}`);
  }

  const fromServerName = source === "mcp_server" ? serverAgentType(body) : undefined;
  const agentType = source === "spec" ? specAgentType(body, flags.agentType) : formAgentType(body, flags.agentType, label, fromServerName ?? defaultAgentType);
  for (const name of Object.keys(flags) as FlagName[]) {
    const value = flags[name];
    if (value === undefined || name === "agentType") continue;
    complete(body, FLAGS[name], value);
  }
  if (doc.kind === "mcp_toolspec" && (body["description"] === undefined || body["version"] === undefined)) {
    throw new UsageError("an MCP tools/list result has no description or version of its own: pass --description TEXT and --spec-version X.Y.Z");
  }
  return { agentType, body, source, kind: doc.kind };
}

/** A spec names its own agent_type; the flag must agree with it, or fills it in when absent. */
function specAgentType(body: Record<string, unknown>, flag: string | undefined): string | undefined {
  const spec = body["spec"];
  const named = isPlainObject(spec) ? spec["agent_type"] : undefined;
  if (flag !== undefined) {
    if (named !== undefined && named !== flag) throw new UsageError(`--agent-type ${flag} does not match the spec's agent_type ${JSON.stringify(named)}`);
    if (body["agent_type"] !== undefined && body["agent_type"] !== flag) throw new UsageError(`--agent-type ${flag} does not match the file's agent_type ${JSON.stringify(body["agent_type"])}`);
    if (named === undefined && isPlainObject(spec)) body["spec"] = { ...spec, agent_type: flag };
    return flag;
  }
  return typeof named === "string" ? named : typeof body["agent_type"] === "string" ? body["agent_type"] : undefined;
}

/**
 * A server.json's default agent type: its name after the `/` (`io.github.acme/weather` gives
 * `weather`) when that is a valid agent type; undefined otherwise, so the flag is asked for.
 */
function serverAgentType(body: Record<string, unknown>): (() => string) | undefined {
  const server = body["mcp_server"];
  const name = isPlainObject(server) ? server["name"] : undefined;
  if (typeof name !== "string") return undefined;
  const local = name.slice(name.indexOf("/") + 1);
  return AGENT_TYPE_RE.test(local) ? () => local : undefined;
}

/** A card or a tool spec names no agent_type; the body beside it may, else the flag or the default must. */
function formAgentType(body: Record<string, unknown>, flag: string | undefined, label: string, defaultAgentType: (() => string) | undefined): string {
  const named = body["agent_type"];
  if (flag !== undefined && named !== undefined && named !== flag) throw new UsageError(`--agent-type ${flag} does not match the file's agent_type ${JSON.stringify(named)}`);
  const agentType = flag ?? (typeof named === "string" ? named : undefined) ?? defaultAgentType?.();
  if (agentType === undefined) throw new UsageError(`--agent-type NAME is required: this ${label} names no agent_type`);
  body["agent_type"] = agentType;
  return agentType;
}

/** Sets a flag's field, or checks that the file says the same (metadata: the same value for each key). */
function complete(body: Record<string, unknown>, { field, flag }: { field: string; flag: string }, value: NonNullable<RegistrationFlags[FlagName]>): void {
  const current = body[field];
  if (current === undefined) {
    body[field] = value;
    return;
  }
  if (field === "metadata" && isPlainObject(current) && isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (current[k] !== undefined && current[k] !== v) throw new UsageError(`--metadata ${k}=${v} contradicts the file's metadata.${k} ${JSON.stringify(current[k])}`);
    }
    body[field] = { ...current, ...value };
    return;
  }
  if (current !== value) throw new UsageError(`${flag} ${JSON.stringify(value)} contradicts the file's ${field} ${JSON.stringify(current)}`);
}
