/**
 * Registering an MCP server by the `server.json` it publishes to the MCP Registry
 * (docs/protocol.md section 8, v1.2): the register body's `mcp_server` is that document, and
 * its tools come either beside it as `mcp_toolspec` (a `tools/list` result) or inside it, under
 * `_meta["io.modelcontextprotocol.registry/publisher-provided"].tools`, the extension point
 * server.schema.json gives publishers (a server.json has no tools of its own). Pure mapping to
 * a tool spec register body, which import.ts then reads as any other: one path for the tools.
 *
 * server.json → spec:
 *   description  = description (required)
 *   version      = version (required; completed as a tool spec's is)
 *   display_name = title
 *   url          = the first `streamable-http` remote's url, else the first `sse` one's
 * `name` is the server's name in the MCP Registry (`namespace/name`); the agent type stays the
 * register subject's, and a warning says so when the two differ. `packages`, `repository`,
 * `websiteUrl`, `icons` and other `_meta` are not kept (the registry runs no package and the
 * discovery front serves records rebuilt from the spec): a warning names them.
 *
 * Beside `mcp_server` go the fields a server.json lacks: `owner_team`, `nats_subject`,
 * `consumer_group`, `tenant_scope`, `kind`. `description`, `version` and `url` are the
 * document's own and refused beside it (register-body.ts), as fields beside `spec` are.
 */
import type { ErrorIssue } from "../../errors.js";
import { invalidCard, invalidRequest, RegistryError } from "../../errors.js";
import { isPlainObject } from "../../spec/spec.js";
import { jsonBoundProblem } from "../../spec/json-bounds.js";
import type { ToolspecRegisterBody } from "./import.js";

export const PUBLISHER_META_KEY = "io.modelcontextprotocol.registry/publisher-provided";
/** Where tools inside a server.json sit, as a register body path. */
export const EMBEDDED_TOOLS_PATH = `mcp_server._meta.${PUBLISHER_META_KEY}.tools`;
/** server.schema.json's rules for `name`: 3 to 200 characters, exactly one `/` (the discovery front's names follow them too). */
export const SERVER_NAME_RE = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
export const MAX_SERVER_NAME_LENGTH = 200;
/** A server.json is a short manifest; the official registry's own records are a few KB. */
export const MAX_SERVER_JSON_CHARS = 256 * 1024;
/** The keys this mapping reads; any other is named in a warning as not kept. */
const READ_KEYS = new Set(["$schema", "name", "description", "version", "title", "remotes", "_meta"]);
/** Fields a register body with `mcp_server` may carry beside it (besides the instance's own). */
export const SERVER_JSON_FIELDS = ["mcp_toolspec", "kind", "owner_team", "nats_subject", "consumer_group", "tenant_scope"] as const;

export type ServerJsonMapping = {
  /** The tool spec register body import.ts reads. */
  toolspecBody: ToolspecRegisterBody;
  /** The server's `title`, for the spec's display_name. */
  displayName: string | undefined;
  /** Where the tools came from: `mcp_toolspec` or EMBEDDED_TOOLS_PATH, to put issues where the sender wrote them. */
  toolsPath: string;
  warnings: string[];
};

/**
 * The tool spec register body of a server.json body. Throws `invalid_card` (paths under
 * `mcp_server`) for a document the registry cannot use, and `invalid_request` for tools sent
 * in both places.
 */
export function serverJsonToToolspec(body: Readonly<Record<string, unknown>>, agentType: string): ServerJsonMapping {
  const server = body["mcp_server"];
  const refuse = (path: string, message: string) => invalidCard(`mcp_server cannot be used: ${path}: ${message}`, [{ path, message }]);
  if (!isPlainObject(server)) throw refuse("mcp_server", "expected an object: the server.json an MCP server publishes to the MCP Registry");
  const tooBig = jsonBoundProblem(server, MAX_SERVER_JSON_CHARS);
  if (tooBig !== null) throw refuse("mcp_server", tooBig);

  const issues: ErrorIssue[] = [];
  const { name, description, version, title } = server;
  if (typeof name !== "string") issues.push({ path: "mcp_server.name", message: 'required: the server name, "namespace/name"' });
  else if (name.length < 3 || name.length > MAX_SERVER_NAME_LENGTH || !SERVER_NAME_RE.test(name)) {
    issues.push({ path: "mcp_server.name", message: `expected "namespace/name" (3 to ${MAX_SERVER_NAME_LENGTH} characters, exactly one "/"), as server.schema.json says` });
  }
  if (typeof description !== "string") issues.push({ path: "mcp_server.description", message: "required: a string" });
  if (typeof version !== "string") issues.push({ path: "mcp_server.version", message: "required: a string (semver X.Y.Z)" });
  if (title !== undefined && typeof title !== "string") issues.push({ path: "mcp_server.title", message: "expected a string" });
  const url = remoteUrl(server["remotes"], issues);
  const embedded = embeddedTools(server["_meta"], issues);
  if (issues.length > 0) throw invalidCard(`mcp_server cannot be used: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`, issues);

  if (embedded !== undefined && body["mcp_toolspec"] !== undefined) {
    throw invalidRequest("register: the tools come either beside mcp_server as mcp_toolspec or inside it, not both", [
      { path: "mcp_toolspec", message: `not with ${EMBEDDED_TOOLS_PATH}` },
    ]);
  }
  if (embedded === undefined && body["mcp_toolspec"] === undefined) {
    throw invalidCard("mcp_server cannot be used: a server.json lists no tools", [
      { path: "mcp_toolspec", message: `required beside mcp_server (its tools/list result), or the tools under ${EMBEDDED_TOOLS_PATH}` },
    ]);
  }

  const warnings: string[] = [];
  const local = (name as string).slice((name as string).indexOf("/") + 1);
  if (local !== agentType) warnings.push(`mcp_server.name: "${name as string}" is registered as agent_type "${agentType}" (the register subject's)`);
  const unread = Object.keys(server).filter((k) => !READ_KEYS.has(k));
  const otherMeta = isPlainObject(server["_meta"]) ? Object.keys(server["_meta"]).filter((k) => k !== PUBLISHER_META_KEY) : [];
  const dropped = [...unread.map((k) => `mcp_server.${k}`), ...otherMeta.map((k) => `mcp_server._meta.${k}`)];
  if (dropped.length > 0) warnings.push(`${dropped.slice(0, 8).join(", ")}${dropped.length > 8 ? ` and ${dropped.length - 8} more` : ""}: not kept (the registry stores the spec built from the server.json)`);

  const toolspecBody: ToolspecRegisterBody = {
    mcp_toolspec: embedded !== undefined ? { tools: embedded } : body["mcp_toolspec"],
    description,
    version,
    owner_team: body["owner_team"],
    nats_subject: body["nats_subject"],
    consumer_group: body["consumer_group"],
    tenant_scope: body["tenant_scope"],
    kind: body["kind"],
  };
  if (url !== undefined) toolspecBody.url = url;
  return { toolspecBody, displayName: title as string | undefined, toolsPath: embedded !== undefined ? EMBEDDED_TOOLS_PATH : "mcp_toolspec", warnings };
}

/**
 * The url of the first `streamable-http` remote, else of the first `sse` one (MCP's deprecated
 * transport, still reachable over HTTP); undefined without remotes (a package-only server).
 */
function remoteUrl(remotes: unknown, issues: ErrorIssue[]): string | undefined {
  if (remotes === undefined) return undefined;
  if (!Array.isArray(remotes)) {
    issues.push({ path: "mcp_server.remotes", message: "expected an array of remotes" });
    return undefined;
  }
  const urlOf = (type: string): string | undefined => {
    const remote = remotes.find((r) => isPlainObject(r) && r["type"] === type && typeof r["url"] === "string");
    return remote === undefined ? undefined : ((remote as Record<string, unknown>)["url"] as string);
  };
  return urlOf("streamable-http") ?? urlOf("sse");
}

/** The tools a publisher put inside the server.json, or undefined when it put none. */
function embeddedTools(meta: unknown, issues: ErrorIssue[]): unknown[] | undefined {
  if (meta === undefined) return undefined;
  if (!isPlainObject(meta)) {
    issues.push({ path: "mcp_server._meta", message: "expected an object" });
    return undefined;
  }
  const provided = meta[PUBLISHER_META_KEY];
  if (!isPlainObject(provided) || provided["tools"] === undefined) return undefined;
  const tools = provided["tools"];
  if (!Array.isArray(tools)) {
    issues.push({ path: EMBEDDED_TOOLS_PATH, message: "expected an array of MCP tools" });
    return undefined;
  }
  return tools;
}

/** A path or message about the tool spec, moved from `mcp_toolspec` to where its tools were sent. */
export function atToolsPath(text: string, toolsPath: string): string {
  if (toolsPath === "mcp_toolspec") return text;
  return text.replaceAll("mcp_toolspec.tools", toolsPath).replaceAll("mcp_toolspec", toolsPath.replace(/\.tools$/, ""));
}

/**
 * An error about the tool spec with its message and issue paths moved by atToolsPath, so a
 * sender whose tools are inside the server.json is pointed there. Anything else unchanged.
 */
export function errorAtToolsPath(e: unknown, toolsPath: string): unknown {
  if (toolsPath === "mcp_toolspec" || !(e instanceof RegistryError)) return e;
  const issues = e.issues?.map((i) => ({ path: atToolsPath(i.path, toolsPath), message: i.message }));
  return new RegistryError(e.code, atToolsPath(e.message, toolsPath), issues === undefined ? {} : { issues });
}
