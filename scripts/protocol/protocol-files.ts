/**
 * The generated half of protocol/ (issue 37): the JSON Schemas of the AgentSpec and of the
 * wire messages, emitted by zod 4 from the schemas the service itself parses with, so the
 * contract other languages validate against has one source. Pure: it returns the files'
 * text by path; scripts/generate-protocol.ts writes them, and a unit test compares them with
 * the committed copies.
 */
import { z } from "zod";
import { agentSpecSchema } from "../../src/domain/spec/spec.js";
import * as messages from "../../src/domain/messages.js";
import { QUERY_OPS, type QueryOp } from "../../src/protocol/subjects.js";
import { QUERIES } from "../../src/service/queries/query-table.js";

/**
 * What JSON Schema cannot say and only the registry checks: a spec the schema accepts may
 * still be refused with `invalid_spec`. protocol/vectors/specs.json pins each of these.
 */
const SPEC_SERVICE_CHECKS = [
  "`version` is semver X.Y.Z with an optional -prerelease (no build metadata)",
  "`nats_subject` is not a NATS system subject ($...) nor a reply inbox (_INBOX...), nor under the registry's prefix, and obeys the deployment's subject policy",
  "capability names are unique within the spec",
  "each `input_schema`/`output_schema` compiles (draft-07 or 2020-12), has no remote `$ref`, its `pattern`s run under RE2 (no lookaround or backreferences), at most 256 objects and arrays, 64 KiB and 64 levels; `#<Name>:<Version>` refs name stored schemas",
  "`depends[].version` is an exact semver version and `depends[].name` holds no control or invisible formatting characters; dependencies close no cycle",
  "`_meta`, `icons`, `execution` and `mcp_extra` stay within their sizes as JSON text (16 KiB, 32 KiB, 4 KiB, 64 KiB)",
];

/** Checks of the whole register body, answered with other codes than invalid_spec. */
const BODY_CHECKS = "The whole body is within the size limit (256 KiB by default; else payload_too_large), at most 64 levels deep and without `__proto__`/`constructor` keys (else invalid_request).";

/** Service-side checks of single fields, said where the field is. */
const FIELD_NOTES: Readonly<Record<string, string>> = {
  version: "semver X.Y.Z with an optional -prerelease; checked by the registry, not by this schema",
  nats_subject: "a NATS subject without wildcards; the registry also refuses $... and _INBOX... subjects and those under its own prefix",
};

/** What a query op's body requires beyond its JSON Schema, said after "registry.<op>: the body". */
const QUERY_NOTES: Partial<Record<QueryOp, string>> = {
  find: "; the registry also requires exactly one of skill, tag, name (not expressed here)",
  check: "; `payload` is required (null is a payload), which the registry checks",
};

/** The messages a client sends, by the file name under protocol/schemas/ (the op or write they are the body of). */
const MESSAGES: ReadonlyArray<readonly [string, z.ZodType, string]> = [
  ["register.request", messages.registerMessage, "registry.register.<agent_type>: the body; `spec` is an AgentSpec (protocol/agentspec.schema.json), or `a2a_card` / `mcp_toolspec` with the fields that complete them (PROTOCOL.md sections 2, 10.1, 10.2), or (v1.2) `mcp_server`, an MCP Registry server.json, its tools inside it or beside it as `mcp_toolspec` (docs/protocol.md section 8)"],
  ["heartbeat.request", messages.heartbeatMessage, "registry.heartbeat.<agent_type>.<instance_id>: the body (may be empty)"],
  ["deregister.request", messages.deregisterMessage, "registry.deregister.<agent_type>[.<instance_id>]: the body"],
  // One file per query op, from the schema its entry in the service's query table parses with.
  ...QUERY_OPS.map((op) => [`${op}.request`, QUERIES[op].body, `registry.${op}: the body${QUERY_NOTES[op] ?? ""}`] as const),
  ["schema-put.request", messages.schemaPutMessage, "registry.schema.put.<name>: the body"],
  ["approve.request", messages.approveMessage, "registry.approval.approve.<agent_type>: the body (v1.2, operators only; docs/trust.md)"],
  ["reject.request", messages.rejectMessage, "registry.approval.reject.<agent_type>: the body (v1.2, operators only; docs/trust.md)"],
  ["pending.request", messages.pendingQuery, "registry.approval.pending: the body (v1.2, operators only; docs/trust.md)"],
  ["trust-set.request", messages.trustSetMessage, "registry.trust.set.<tenant>: the body (v1.2, operators only; docs/trust.md)"],
  ["trust-delete.request", messages.trustDeleteMessage, "registry.trust.delete.<tenant>: the body (v1.2, operators only; docs/trust.md)"],
  ["deprecate.request", messages.deprecateMessage, "registry.approval.deprecate.<agent_type>: the body (v1.2, operators only; docs/trust.md)"],
  ["undeprecate.request", messages.undeprecateMessage, "registry.approval.undeprecate.<agent_type>: the body (v1.2, operators only; docs/trust.md)"],
];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** The JSON Schema (draft 2020-12) of what a client may send: fields with defaults are optional. */
function jsonSchemaOf(schema: z.ZodType): Record<string, Json> {
  return z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<string, Json>;
}

/** Object keys sorted at every level, so the files do not change with zod's internal order. */
function sorted(value: Json): Json {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted(value[k]!)]));
}

const text = (value: Record<string, Json>): string => `${JSON.stringify(sorted(value), null, 2)}\n`;

function agentSpecFile(): Record<string, Json> {
  const schema = jsonSchemaOf(agentSpecSchema);
  const properties = schema["properties"] as Record<string, Record<string, Json>>;
  for (const [field, note] of Object.entries(FIELD_NOTES)) properties[field]!["description"] = note;
  return {
    ...schema,
    title: "AgentSpec",
    description: [
      "The AgentSpec of PROTOCOL.md section 3, as a client sends it (fields with defaults may be left out; unknown fields are dropped and reported in the register reply's warnings).",
      "Necessary, not sufficient: the registry also checks, with invalid_spec,",
      ...SPEC_SERVICE_CHECKS.map((c, i) => `- ${c}${i === SPEC_SERVICE_CHECKS.length - 1 ? "." : ";"}`),
      BODY_CHECKS,
    ].join("\n"),
  };
}

/** Every generated file's text by its path under the repository root. */
export function protocolFiles(): Map<string, string> {
  const files = new Map<string, string>();
  files.set("protocol/agentspec.schema.json", text(agentSpecFile()));
  for (const [name, schema, about] of MESSAGES) {
    files.set(`protocol/schemas/${name}.schema.json`, text({ ...jsonSchemaOf(schema), title: name, description: about }));
  }
  return files;
}
