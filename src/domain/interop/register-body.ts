/**
 * The spec a register body carries, whichever of its four forms it came in (PROTOCOL.md
 * sections 2, 10.1 and 10.2, docs/protocol.md section 8 for v1.2's): an AgentSpec under `spec`,
 * an A2A Agent Card under `a2a_card`, an MCP server's `tools/list` result under `mcp_toolspec`,
 * or its MCP Registry `server.json` under `mcp_server` (with its tools as `mcp_toolspec` beside
 * it or inside it). Exactly one of them. A card or a tool spec becomes a raw AgentSpec here
 * (a2a/import-card.ts, mcp/import.ts, mcp/server-json.ts) and is then
 * validated like any spec, by the service and by the CLI's `validate` alike: one path, so
 * the two cannot accept different things.
 *
 * The fields that complete a card or a tool spec (`nats_subject`, `owner_team`, ...) sit
 * beside it at the top of the body; beside `spec` they are refused, since the spec names
 * them itself and silently preferring one would hide a mistake.
 */
import { ErrorCode, invalidCard, invalidRequest, RegistryError } from "../errors.js";
import { isPlainObject } from "../spec/spec.js";
import { describeIssues } from "../spec/validation.js";
import { importCard, type A2aVersion } from "./a2a/index.js";
import { importToolspec } from "./mcp/index.js";
import { atToolsPath, EMBEDDED_TOOLS_PATH, errorAtToolsPath, SERVER_JSON_FIELDS, serverJsonToToolspec } from "./mcp/server-json.js";

export const SPEC_SOURCES = ["spec", "a2a_card", "mcp_toolspec", "mcp_server"] as const;
export type SpecSource = (typeof SPEC_SOURCES)[number];

/** Top-level fields that complete a card (10.1) or a tool spec (10.2). */
const CARD_FIELDS = ["strict", "nats_subject", "consumer_group", "owner_team", "tenant_scope"] as const;
export const TOOLSPEC_FIELDS = ["kind", "description", "version", "owner_team", "url", "nats_subject", "consumer_group", "tenant_scope"] as const;
const COMPLETING_FIELDS = new Set<string>([...CARD_FIELDS, ...TOOLSPEC_FIELDS]);
/** What a field refused beside a form should be instead. */
const MISPLACED_HINT: Readonly<Record<SpecSource, string>> = {
  spec: "set it inside spec",
  a2a_card: "not a field of a register body with a2a_card",
  mcp_toolspec: "not a field of a register body with mcp_toolspec",
  mcp_server: "the server.json says it: set it in mcp_server",
};
const ALLOWED_FIELDS: Readonly<Record<SpecSource, ReadonlySet<string>>> = {
  spec: new Set(),
  a2a_card: new Set(CARD_FIELDS),
  mcp_toolspec: new Set(TOOLSPEC_FIELDS),
  mcp_server: new Set(SERVER_JSON_FIELDS),
};

export type RegisterBodySpec = {
  /** The raw AgentSpec: validate it as any spec before storing it. */
  raw: unknown;
  /** What the card or tool spec import noticed (`a2a_card.<path>: ...`), before the spec's own warnings. */
  warnings: string[];
  source: SpecSource;
  /** The A2A version the card was read as, for a card. */
  a2aVersion?: A2aVersion;
};

/**
 * The raw spec of a register body sent on `register.<agentType>`. Throws `invalid_request`
 * for a body with none or several of the three forms, or with fields that do not belong
 * beside its form, and `invalid_card` for a card or tool spec the registry cannot use.
 */
export function specOfRegisterBody(agentType: string, body: Readonly<Record<string, unknown>>): RegisterBodySpec {
  const present = presentSources(body);
  if (present.length !== 1) {
    const message = present.length === 0 ? "register: the body needs one of spec, a2a_card, mcp_toolspec, mcp_server" : `register: send only one of ${present.join(", ")}`;
    throw invalidRequest(message, present.length === 0 ? [{ path: "spec", message: "required (or a2a_card, mcp_toolspec or mcp_server)" }] : present.slice(1).map((p) => ({ path: p, message: `not with ${present[0]}` })));
  }
  const source = present[0]!;
  const named = body["agent_type"];
  if (named !== undefined && named !== agentType) {
    throw invalidRequest(`agent_type ${JSON.stringify(named)} does not match the subject's agent_type ${agentType}`, [{ path: "agent_type", message: `must be ${agentType}` }]);
  }
  const allowed = ALLOWED_FIELDS[source];
  const misplaced = Object.keys(body).filter((k) => COMPLETING_FIELDS.has(k) && !allowed.has(k) && body[k] !== undefined);
  if (misplaced.length > 0) {
    throw invalidRequest(`register: ${misplaced.join(", ")} ${misplaced.length === 1 ? "does" : "do"} not go beside ${source}`, misplaced.map((path) => ({
      path,
      message: MISPLACED_HINT[source],
    })));
  }

  if (source === "spec") {
    const raw = body["spec"];
    if (isPlainObject(raw) && "agent_type" in raw && raw["agent_type"] !== agentType) {
      throw invalidRequest(`spec.agent_type ${JSON.stringify(raw["agent_type"])} does not match the subject's agent_type ${agentType}`, [
        { path: "spec.agent_type", message: `must be ${agentType}` },
      ]);
    }
    return { raw, warnings: [], source };
  }
  if (source === "a2a_card") {
    const str = (k: string): string | undefined => (typeof body[k] === "string" ? (body[k] as string) : undefined);
    checkStrings(body, ["nats_subject", "consumer_group", "owner_team"]);
    const tenant = body["tenant_scope"];
    if (tenant !== undefined && tenant !== null && typeof tenant !== "string") throw invalidRequest("register: tenant_scope must be a string or null", [{ path: "tenant_scope", message: "expected a string or null" }]);
    const strict = body["strict"];
    if (strict !== undefined && typeof strict !== "boolean") throw invalidRequest("register: strict must be a boolean", [{ path: "strict", message: "expected a boolean" }]);
    const imported = importCard(body["a2a_card"], {
      agent_type: agentType,
      strict: strict === true,
      nats_subject: str("nats_subject"),
      consumer_group: str("consumer_group"),
      owner_team: str("owner_team"),
      ...(tenant !== undefined ? { tenant_scope: tenant as string | null } : {}),
    });
    return { raw: imported.spec, warnings: imported.warnings, source, a2aVersion: imported.a2aVersion };
  }
  if (source === "mcp_server") return specOfServerJson(agentType, body);
  const imported = importToolspec(
    {
      mcp_toolspec: body["mcp_toolspec"],
      description: body["description"],
      version: body["version"],
      owner_team: body["owner_team"],
      url: body["url"],
      nats_subject: body["nats_subject"],
      consumer_group: body["consumer_group"],
      tenant_scope: body["tenant_scope"],
      kind: body["kind"],
    },
    { agentType },
  );
  return { raw: imported.spec, warnings: imported.warnings, source };
}

/** Which of the four forms a document is, for the CLI's auto-detection (null: none, or several). */
export function specSourceOf(doc: Readonly<Record<string, unknown>>): SpecSource | null {
  const present = presentSources(doc);
  return present.length === 1 ? present[0]! : null;
}

/** The forms a body carries; `mcp_toolspec` beside `mcp_server` is that server's tools, not a form of its own. */
export function presentSources(body: Readonly<Record<string, unknown>>): SpecSource[] {
  const present = SPEC_SOURCES.filter((k) => body[k] !== undefined);
  return present.includes("mcp_server") ? present.filter((k) => k !== "mcp_toolspec") : present;
}

/** A server.json body: mapped to a tool spec body, imported as one, with the server's title as display_name. */
function specOfServerJson(agentType: string, body: Readonly<Record<string, unknown>>): RegisterBodySpec {
  const mapping = serverJsonToToolspec(body, agentType);
  let imported;
  try {
    imported = importToolspec(mapping.toolspecBody, { agentType });
  } catch (e) {
    throw errorAtToolsPath(e, mapping.toolsPath);
  }
  const raw = mapping.displayName === undefined ? imported.spec : { ...imported.spec, display_name: mapping.displayName };
  // The import names the fields it read by the tool spec body's names; here they came from the server.json.
  const moved = imported.warnings.map((w) => (w.startsWith("version:") ? `mcp_server.${w}` : atToolsPath(w, mapping.toolsPath)));
  return { raw, warnings: [...mapping.warnings, ...moved], source: "mcp_server" };
}

function checkStrings(body: Readonly<Record<string, unknown>>, keys: readonly string[]): void {
  for (const k of keys) {
    if (body[k] !== undefined && typeof body[k] !== "string") throw invalidRequest(`register: ${k} must be a string`, [{ path: k, message: "expected a string" }]);
  }
}

const SCHEMA_FIELDS: Readonly<Record<string, string>> = { input_schema: "inputSchema", output_schema: "outputSchema" };
/** Spec fields a server.json fills, at the server.json's own paths. */
const SERVER_JSON_PATHS: Readonly<Record<string, string>> = {
  description: "mcp_server.description",
  version: "mcp_server.version",
  url: "mcp_server.remotes",
  display_name: "mcp_server.title",
};

/**
 * A spec built from a card or a tool spec that the spec rules refuse (a skill schema that does
 * not compile, a remote `$ref`) is a card the registry cannot use: `invalid_card`, with each
 * issue at the place in the card or tool spec it came from (`capabilities.2.input_schema` ->
 * `a2a_card.skills.<the skill with that id>.inputSchema`, `mcp_toolspec.tools.2.inputSchema`),
 * so the sender fixes the document it sent. Body fields keep their own paths. A spec (or any
 * other error) passes through unchanged.
 */
export function asCardError(e: unknown, source: SpecSource, body: Readonly<Record<string, unknown>>, raw: unknown): unknown {
  if (source === "spec" || !(e instanceof RegistryError) || e.code !== ErrorCode.InvalidSpec) return e;
  const caps = isPlainObject(raw) && Array.isArray(raw["capabilities"]) ? (raw["capabilities"] as unknown[]) : [];
  const skills = isPlainObject(body["a2a_card"]) && Array.isArray(body["a2a_card"]["skills"]) ? (body["a2a_card"]["skills"] as unknown[]) : [];
  const toolsPath = source === "mcp_server" && body["mcp_toolspec"] === undefined ? EMBEDDED_TOOLS_PATH : "mcp_toolspec.tools";
  const where = (path: string): string => {
    if (source === "mcp_server" && SERVER_JSON_PATHS[path] !== undefined) return SERVER_JSON_PATHS[path];
    const m = /^capabilities\.(\d+)(?:\.([^.]+))?(.*)$/.exec(path);
    if (!m) return path;
    const [, index, field, rest] = m;
    const mappedField = field === undefined ? "" : `.${SCHEMA_FIELDS[field] ?? field}`;
    if (source !== "a2a_card") return `${toolsPath}.${index}${mappedField}${rest}`;
    const name = (caps[Number(index)] as { name?: unknown } | undefined)?.name;
    const skill = skills.findIndex((s) => isPlainObject(s) && s["id"] === name);
    return skill < 0 ? path : `a2a_card.skills.${skill}${mappedField}${rest}`;
  };
  const issues = (e.issues ?? []).map((i) => ({ path: where(i.path), message: i.message }));
  return invalidCard(`${source} cannot be used: ${issues.length > 0 ? describeIssues(issues) : e.message}`, issues);
}
