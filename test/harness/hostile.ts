/**
 * fast-check arbitraries of hostile requests for every endpoint of PROTOCOL.md: subjects with
 * good and bad tokens, and payloads that are random bytes, random JSON, or a valid body with
 * one mutation (wrong types, huge strings and arrays within and over the size limit, deep
 * nesting, `__proto__` / `constructor` keys, invalid UTF-8, a missing field).
 */
import fc from "fast-check";
import { QUERY_OPS, type QueryOp } from "../../src/protocol/subjects.js";
import { AGENT_TYPE_RE, INSTANCE_ID_RE, TENANT_RE } from "../../src/domain/spec/spec.js";

export const SIZE_LIMIT = 256 * 1024;

export type HostileRequest = { endpoint: string; subject: string; payload: Uint8Array; label: string };

const enc = new TextEncoder();
/** Replaced in the JSON text after stringify: values JSON.stringify cannot produce. */
const DEEP = "\u0000deep\u0000";
const BAD_UTF8 = "\u0000utf8\u0000";

// Printable tokens NATS carries (no whitespace, '.', '*', '>'), most of them wrong for the registry.
const tokenChars = fc.constantFrom(..."abcxyz019_-ABCZ@%#$!&+=~,;:'\"?/\\[]{}()<|^`éü漢😀".split(/(?:)/u));
const anyToken = fc.string({ unit: tokenChars, minLength: 1, maxLength: 140 });
const badToken = (re: RegExp) => fc.oneof(anyToken.filter((t) => !re.test(t)), fc.constant("x".repeat(200)), fc.constant("-lead"), fc.constant("UPPER"));
/** Valid tokens the writes may use; never a seed type, so no hostile write can touch the seeds. */
const goodType = fc.oneof(fc.constantFrom("hostile", "hostile-b"), fc.stringMatching(AGENT_TYPE_RE).filter((t) => !t.startsWith("seed") && t.length <= 127));
const typeToken = fc.oneof({ weight: 3, arbitrary: goodType }, { weight: 1, arbitrary: badToken(AGENT_TYPE_RE) });
const instanceToken = fc.oneof({ weight: 3, arbitrary: fc.stringMatching(INSTANCE_ID_RE).filter((t) => t.length <= 128) }, { weight: 1, arbitrary: badToken(INSTANCE_ID_RE) });
const tenantToken = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("acme", "other") }, { weight: 1, arbitrary: badToken(TENANT_RE) });

function validSpec(agentType: string): Record<string, unknown> {
  return {
    agent_type: agentType,
    version: "1.0.0",
    description: "hostile test agent",
    owner_team: "red-team",
    capabilities: [{ name: "hostile.run", description: "runs", input_schema: { type: "object" }, output_schema: {} }],
    nats_subject: `agent.tasks.${agentType}`,
    consumer_group: agentType,
  };
}

const QUERY_BODIES: Record<QueryOp, Record<string, unknown>> = {
  lookup: { capability: "seed-a.run", status: ["ready"], version: ">=1.0.0" },
  get: { agent_type: "seed-a" },
  list: { status: ["ready"], owner_team: "team-a", tags: { k: "v" }, limit: 10, cursor: null },
  capabilities: { status: ["ready"] },
  route: { skill: "seed-a.run", tags: ["x"], preferred_runtime: "node" },
  find: { skill: "seed-a.run" },
  search: { query: "seed", limit: 5 },
  discover: { capability: "seed-a.run" },
  card: { agent_type: "seed-a", a2a_version: "0.3" },
  toolspec: { agent_type: "seed-a" },
  check: { capability: "seed-a.run", agent_type: "seed-a", direction: "input", payload: { text: "x" } },
  graph: { agent_type: "seed-a", direction: "dependents", depth: 3 },
  sbom: { format: "spdx", agent_type: "seed-a" },
  schemas: { name: "Seed", limit: 10, cursor: null },
  schema: { name: "Seed", version: "1.0.0" },
};

const nestedArrays = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
const protoObject = (key: "__proto__" | "constructor") => JSON.parse(`{"${key}":{"polluted":true},"x":1}`) as unknown;

/** Values that replace one field: wrong types, huge, deep, prototype keys, bad bytes. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, "", "🙂", [], {}, "__proto__", "\ud800", Number.MAX_SAFE_INTEGER + 2),
  fc.integer(),
  fc.string({ maxLength: 64 }),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(60_000, 200_000, SIZE_LIMIT + 10_000).map((n) => "x".repeat(n)),
  fc.constantFrom(300, 10_000, 40_000).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.constantFrom(300).map((n) => Array.from({ length: n }, (_, i) => ({ name: `c.c${i}`, description: "", input_schema: {}, output_schema: {} }))),
  fc.constantFrom(63, 70, 10_000).map((d) => (d <= 70 ? nestedArrays(d) : DEEP)),
  fc.constantFrom(protoObject("__proto__"), protoObject("constructor"), { a: { b: [protoObject("__proto__")] } }),
  fc.constant(BAD_UTF8),
);

/**
 * min_revision values that are wrong but do not make the query wait: a reachable integer above
 * the view's revision waits up to 2 s by design (the test sends one such request on its own).
 */
const minRevision: fc.Arbitrary<unknown> = fc.constantFrom(-1, -1e308, 0.5, "7", null, [], {}, true, 0, Number.NaN, "1e308");

const registerPaths: Array<Array<string | number>> = [
  [], ["spec"], ["spec", "agent_type"], ["spec", "version"], ["spec", "description"], ["spec", "capabilities"],
  ["spec", "capabilities", 0], ["spec", "capabilities", 0, "name"], ["spec", "capabilities", 0, "input_schema"],
  ["spec", "capabilities", 0, "input_schema", "pattern"], ["spec", "capabilities", 0, "input_schema", "properties"],
  ["spec", "capabilities", 0, "output_schema", "$ref"], ["spec", "tags"], ["spec", "tenant_scope"], ["spec", "weight"],
  ["spec", "a2a_card"], ["spec", "nats_subject"], ["spec", "max_concurrent_tasks"], ["spec", "extra_field"],
  ["instance_id"], ["heartbeat_interval_ms"], ["status"], ["metadata"], ["metadata", "k"],
];

/** A register body with an A2A card (PROTOCOL.md section 10.1), and the fields a hostile value replaces. */
const cardBody = {
  a2a_card: {
    name: "Hostile card", description: "hostile test agent", version: "1.0.0",
    supportedInterfaces: [{ url: "nats:hostile.tasks", protocolBinding: "NATS", protocolVersion: "1.0" }],
    capabilities: {}, defaultInputModes: ["application/json"], defaultOutputModes: ["application/json"],
    skills: [{ id: "hostile.card", name: "Card skill", description: "d", tags: ["t"], inputSchema: { type: "object" } }],
  },
  nats_subject: "hostile.card.tasks",
};
const cardPaths: Array<Array<string | number>> = [
  [], ["a2a_card"], ["a2a_card", "name"], ["a2a_card", "version"], ["a2a_card", "skills"], ["a2a_card", "skills", 0],
  ["a2a_card", "skills", 0, "id"], ["a2a_card", "skills", 0, "tags"], ["a2a_card", "skills", 0, "inputSchema"],
  ["a2a_card", "supportedInterfaces"], ["a2a_card", "capabilities"], ["a2a_card", "provider"], ["strict"], ["nats_subject"], ["owner_team"], ["spec"],
];
/** A register body with an MCP tool spec (section 10.2), and the fields a hostile value replaces. */
const toolspecBody = {
  mcp_toolspec: { tools: [{ name: "hostile_tool", description: "d", inputSchema: { type: "object", properties: { q: { type: "string" } } }, annotations: { readOnlyHint: true } }] },
  description: "hostile tools", version: "1.0.0", nats_subject: "hostile.tool.tasks",
};
const toolspecPaths: Array<Array<string | number>> = [
  [], ["mcp_toolspec"], ["mcp_toolspec", "tools"], ["mcp_toolspec", "tools", 0], ["mcp_toolspec", "tools", 0, "name"],
  ["mcp_toolspec", "tools", 0, "inputSchema"], ["mcp_toolspec", "tools", 0, "inputSchema", "properties"], ["mcp_toolspec", "tools", 0, "annotations"],
  ["mcp_toolspec", "tools", 0, "_meta"], ["description"], ["version"], ["kind"], ["a2a_card"],
];

/** Sets (or deletes, when `value` is undefined) the field at `path`; an empty path replaces the body. */
function mutate(body: Record<string, unknown>, path: Array<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(body);
  let node: any = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== "object" || node[key] === null) node[key] = {};
    node = node[key];
  }
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** JSON text with the sentinels expanded: 10,000-deep nesting and invalid UTF-8 bytes. */
function encodeBody(value: unknown): Uint8Array {
  const text = JSON.stringify(value) ?? "null";
  const deep = text.split(JSON.stringify(DEEP)).join(`${"[".repeat(10_000)}${"]".repeat(10_000)}`);
  // The sentinel becomes a JSON string holding bytes that are not UTF-8 (0xff, a truncated
  // sequence, an encoded surrogate).
  const parts = deep.split(JSON.stringify(BAD_UTF8)).map((p) => enc.encode(p));
  const bad = new Uint8Array([0x22, 0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x22]);
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0) + bad.length * (parts.length - 1));
  let at = 0;
  parts.forEach((p, i) => {
    if (i > 0) {
      out.set(bad, at);
      at += bad.length;
    }
    out.set(p, at);
    at += p.length;
  });
  return out;
}

const fieldPaths = (body: Record<string, unknown>): Array<Array<string | number>> => [[], ...Object.keys(body).map((k) => [k]), ["min_revision"], ["extra"]];

/** A payload for an endpoint whose valid body is `valid`. */
function payloadFor(valid: Record<string, unknown>, paths: Array<Array<string | number>>): fc.Arbitrary<{ payload: Uint8Array; label: string }> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .constantFrom(...paths)
        .chain((path) => fc.tuple(fc.constant(path), path[0] === "min_revision" ? minRevision : fc.option(hostileValue, { freq: 8, nil: undefined })))
        .map(([path, value]) => ({ payload: encodeBody(mutate(valid, path, value)), label: `mutate ${path.join(".") || "(body)"}` })),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((payload) => ({ payload, label: "random bytes" })) },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }).map((t) => ({ payload: enc.encode(t), label: "random JSON" })) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }).map((t) => ({ payload: enc.encode(`{"spec":${t}`), label: "truncated JSON" })) },
  );
}

/** One hostile request for any endpoint: the subject (good or bad tokens) and the payload. */
export function hostileRequest(prefix: string): fc.Arbitrary<HostileRequest> {
  const heartbeatBody = { status: "ready", active_tasks: 1 };
  const deregisterBody = { reason: "test" };
  // Valid registrations carrying unknown fields (stored without them, named in `warnings`).
  const unknownFields = fc.tuple(goodType, fc.constantFrom(1, 100, 27_000)).map(([t, n]) => {
    const extra = Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i.toString(36)}`, 0]));
    return { endpoint: "register", subject: `${prefix}.register.${t}`, payload: encodeBody({ spec: { ...validSpec(t), ...extra } }), label: `spec with ${n} unknown fields` };
  });
  const writes: Array<fc.Arbitrary<HostileRequest>> = [
    unknownFields,
    typeToken.chain((t) => payloadFor({ spec: validSpec(t), heartbeat_interval_ms: 30_000 }, registerPaths).map((p) => ({ endpoint: "register", subject: `${prefix}.register.${t}`, ...p }))),
    typeToken.chain((t) => payloadFor(cardBody, cardPaths).map((p) => ({ endpoint: "register", subject: `${prefix}.register.${t}`, ...p }))),
    typeToken.chain((t) => payloadFor(toolspecBody, toolspecPaths).map((p) => ({ endpoint: "register", subject: `${prefix}.register.${t}`, ...p }))),
    fc.tuple(typeToken, instanceToken).chain(([t, i]) => payloadFor(heartbeatBody, fieldPaths(heartbeatBody)).map((p) => ({ endpoint: "heartbeat", subject: `${prefix}.heartbeat.${t}.${i}`, ...p }))),
    fc.tuple(typeToken, instanceToken).chain(([t, i]) => payloadFor(deregisterBody, fieldPaths(deregisterBody)).map((p) => ({ endpoint: "deregister", subject: `${prefix}.deregister.${t}.${i}`, ...p }))),
    typeToken.chain((t) => payloadFor(deregisterBody, fieldPaths(deregisterBody)).map((p) => ({ endpoint: "deregister_type", subject: `${prefix}.deregister.${t}`, ...p }))),
    // The tenant's forms (v1.2): the subject's tenant is bound to the body.
    fc.tuple(tenantToken, typeToken).chain(([n, t]) => payloadFor({ spec: validSpec(t), heartbeat_interval_ms: 30_000 }, registerPaths).map((p) => ({ endpoint: "tenant_register", subject: `${prefix}.tenant.${n}.register.${t}`, ...p }))),
    fc.tuple(tenantToken, typeToken).chain(([n, t]) => payloadFor(cardBody, [...cardPaths, ["tenant_scope"]]).map((p) => ({ endpoint: "tenant_register", subject: `${prefix}.tenant.${n}.register.${t}`, ...p }))),
    fc.tuple(tenantToken, typeToken, instanceToken).chain(([n, t, i]) => payloadFor(heartbeatBody, fieldPaths(heartbeatBody)).map((p) => ({ endpoint: "tenant_heartbeat", subject: `${prefix}.tenant.${n}.heartbeat.${t}.${i}`, ...p }))),
    fc.tuple(tenantToken, typeToken, instanceToken).chain(([n, t, i]) => payloadFor(deregisterBody, fieldPaths(deregisterBody)).map((p) => ({ endpoint: "tenant_deregister", subject: `${prefix}.tenant.${n}.deregister.${t}.${i}`, ...p }))),
    fc.tuple(tenantToken, typeToken).chain(([n, t]) => payloadFor(deregisterBody, fieldPaths(deregisterBody)).map((p) => ({ endpoint: "tenant_deregister_type", subject: `${prefix}.tenant.${n}.deregister.${t}`, ...p }))),
  ];
  const queries = QUERY_OPS.flatMap((op) => {
    const body = QUERY_BODIES[op]!;
    return [
      payloadFor(body, fieldPaths(body)).map((p) => ({ endpoint: op, subject: `${prefix}.${op}`, ...p })),
      tenantToken.chain((tenant) => payloadFor(body, fieldPaths(body)).map((p) => ({ endpoint: `tenant_${op}`, subject: `${prefix}.tenant.${tenant}.${op}`, ...p }))),
    ];
  });
  // A failing case prints as its label and subject, not as 256 KiB of bytes.
  return fc.oneof(...writes, ...queries).map((r) => Object.assign(r, { [fc.toStringMethod]: () => `${r.label} on ${JSON.stringify(r.subject)} (${r.payload.length} bytes)` }));
}

export const WRITE_ENDPOINTS = new Set(["register", "heartbeat", "deregister", "deregister_type"].flatMap((e) => [e, `tenant_${e}`]));
