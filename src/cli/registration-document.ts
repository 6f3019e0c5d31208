/**
 * What a file handed to `register` or `validate` is, told from its shape alone, so operators
 * need no flag to say it (PROTOCOL.md sections 2, 10.1, 10.2). In order:
 *   registry_file  an `agents` list or a `schemaVersion` (Registry v2/v1), and no `agent_type`
 *                  (the service loads these itself);
 *   agent_spec     `capabilities` is a list: an AgentSpec (it may carry an `a2a_card` of its
 *                  own, as `get --json` shows one imported from a card, so this comes before
 *                  the register body);
 *   register_body  one of `spec`, `a2a_card`, `mcp_toolspec`, `mcp_server` at the top, with the
 *                  fields of a register request beside it;
 *   agent_spec     any other document that names an `agent_type`: meant as a spec (with
 *                  capabilities missing or mistyped), so the spec's rules say what is wrong;
 *   a2a_card       `name` and `skills`: a bare A2A Agent Card (its own `capabilities` is an
 *                  object of flags, never a list);
 *   mcp_server     a `name` with one `/`, a `version`, and the server.json `$schema`, `remotes` or
 *                  `packages`: a bare MCP Registry server.json (its tools inside its `_meta`);
 *   mcp_toolspec   `tools`: a bare MCP `tools/list` result;
 *   agent_spec     `capabilities` that is neither a list nor an object, for the same reason.
 * A card's or a tool list's own problems (skills that are not a list) are left to the import,
 * which names them with their paths, as the service does.
 * Anything else is refused with the list of what was expected.
 */
import { readFileSync } from "node:fs";
import { extname } from "node:path";
import { parseSpecDocument } from "../kit/documents.js";
import { presentSources, type SpecSource } from "../domain/interop/register-body.js";
import { isPlainObject } from "../domain/spec/spec.js";

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

export const DOCUMENT_KINDS = ["registry_file", "agent_spec", "register_body", "a2a_card", "mcp_toolspec", "mcp_server"] as const;
export type DocumentKind = (typeof DOCUMENT_KINDS)[number];

export type RegistrationDocument =
  | { kind: "registry_file" | "agent_spec" | "a2a_card" | "mcp_toolspec" | "mcp_server"; value: Record<string, unknown> }
  | { kind: "register_body"; value: Record<string, unknown>; source: SpecSource };

export type DetectedDocument = ({ ok: true } & RegistrationDocument) | { ok: false; errors: string[] };

/** How each kind is named in messages and in `validate`'s summary line. */
export const DOCUMENT_LABELS: Readonly<Record<DocumentKind, string>> = {
  registry_file: "registry file",
  agent_spec: "AgentSpec",
  register_body: "register body",
  a2a_card: "A2A Agent Card",
  mcp_toolspec: "MCP tools/list result",
  mcp_server: "MCP server.json",
};

const EXPECTED =
  "expected a registry file (an agents list), an AgentSpec (a capabilities list), a register body (one of spec, a2a_card, mcp_toolspec, mcp_server), " +
  'an A2A Agent Card (name and a skills list), an MCP tools/list result ({"tools": [...]}) or an MCP Registry server.json ("namespace/name", version, remotes or packages)';

export function detectDocument(value: Record<string, unknown>): DetectedDocument {
  if ("agents" in value && !("agent_type" in value)) return { ok: true, kind: "registry_file", value };
  // A Registry v2 (or v1 gateway) document: `{"schemaVersion": "2.0" | "1.0", ...}`, agents or not.
  if ("schemaVersion" in value && !("agent_type" in value)) return { ok: true, kind: "registry_file", value };
  const capabilities = value["capabilities"];
  if (Array.isArray(capabilities)) return { ok: true, kind: "agent_spec", value };
  const sources = presentSources(value);
  if (sources.length > 1) return { ok: false, errors: [`a register body carries one of spec, a2a_card, mcp_toolspec, mcp_server; this one has ${sources.join(" and ")}`] };
  if (sources.length === 1) return { ok: true, kind: "register_body", value, source: sources[0]! };
  // Neither a card nor a tools/list result names an agent_type; a spec does (and has `tools` of its own).
  if ("agent_type" in value) return { ok: true, kind: "agent_spec", value };
  if ("skills" in value && "name" in value) return { ok: true, kind: "a2a_card", value };
  if (isServerJson(value)) return { ok: true, kind: "mcp_server", value };
  if ("tools" in value) return { ok: true, kind: "mcp_toolspec", value };
  if (capabilities !== undefined && !isPlainObject(capabilities)) return { ok: true, kind: "agent_spec", value };
  const keys = Object.keys(value);
  const found = keys.length === 0 ? "an empty document" : `a document with ${keys.slice(0, 5).join(", ")}${keys.length > 5 ? ", ..." : ""}`;
  return { ok: false, errors: [`not a document the registry takes: ${found}; ${EXPECTED}`] };
}

/** Loads and detects in one step: the errors of either, or the document. */
export function readRegistrationDocument(path: string): DetectedDocument {
  const loaded = loadDocument(path);
  if (!loaded.ok) return loaded;
  return detectDocument(loaded.value);
}

/**
 * A server.json as the MCP Registry publishes it: a `namespace/name` name and a version, and
 * what only a server.json has (its schema URL, remotes or packages). Its tools, if any, are
 * inside its `_meta`, so `tools` at the top means a tools/list result instead.
 */
function isServerJson(value: Record<string, unknown>): boolean {
  const name = value["name"];
  if (typeof name !== "string" || !name.includes("/") || typeof value["version"] !== "string" || "tools" in value) return false;
  const schema = value["$schema"];
  return (typeof schema === "string" && schema.includes("server.schema.json")) || Array.isArray(value["remotes"]) || Array.isArray(value["packages"]);
}
