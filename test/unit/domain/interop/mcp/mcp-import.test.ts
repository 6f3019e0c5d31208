/**
 * importToolspec, one rule a test (PROTOCOL.md section 10.2): what each tool key becomes, the
 * body's fields and defaults, and every refusal as invalid_card with the tool's path.
 */
import { describe, expect, it } from "vitest";
import { importToolspec, MAX_TOOLS, type ToolspecRegisterBody } from "../../../../../src/domain/interop/mcp/index.js";
import { ErrorCode, RegistryError } from "../../../../../src/domain/errors.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { MAX_MCP_ICONS, MCP_KEPT_LIMITS } from "../../../../../src/domain/spec/spec.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";

const OBJECT = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
const tool = (name: string, extra: Record<string, unknown> = {}) => ({ name, description: `does ${name}`, inputSchema: OBJECT, ...extra });
const body = (tools: unknown[], extra: Partial<ToolspecRegisterBody> = {}): ToolspecRegisterBody => ({
  mcp_toolspec: { tools },
  description: "an MCP server",
  version: "2.1.0",
  owner_team: "team-x",
  ...extra,
});
const imported = (tools: unknown[], extra: Partial<ToolspecRegisterBody> = {}) => importToolspec(body(tools, extra), { agentType: "srv" });
const cap = (t: Record<string, unknown>) => imported([t]).spec.capabilities[0]!;

/** The invalid_card thrown, for assertions on its issues. */
function refusal(run: () => unknown): RegistryError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(RegistryError);
    expect((e as RegistryError).code).toBe(ErrorCode.InvalidCard);
    return e as RegistryError;
  }
  throw new Error("expected invalid_card");
}

describe("tool → capability", () => {
  it("name is the tool name, case and dots kept", () => {
    expect(cap(tool("getUser")).name).toBe("getUser");
    expect(cap(tool("admin.tools.list")).name).toBe("admin.tools.list");
    expect(cap(tool("DATA_EXPORT_v2")).name).toBe("DATA_EXPORT_v2");
    expect(cap(tool("user-profile")).name).toBe("user-profile");
  });

  it("description falls back to the title, then annotations.title, then the name", () => {
    expect(cap(tool("a")).description).toBe("does a");
    expect(cap({ name: "a", title: "Title A", inputSchema: OBJECT, annotations: { title: "Ann A" } }).description).toBe("Title A");
    expect(cap({ name: "a", inputSchema: OBJECT, annotations: { title: "Ann A" } }).description).toBe("Ann A");
    expect(cap({ name: "a", inputSchema: OBJECT }).description).toBe("a");
  });

  it("title is kept when present", () => {
    expect(cap(tool("a", { title: "Do A" })).title).toBe("Do A");
    expect(cap(tool("a"))).not.toHaveProperty("title");
  });

  it("input_schema is the inputSchema as sent", () => {
    const inputSchema = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", additionalProperties: false };
    expect(cap(tool("a", { inputSchema })).input_schema).toBe(inputSchema);
  });

  it("output_schema is the outputSchema, else {}", () => {
    const outputSchema = { type: "object", properties: { n: { type: "integer" } } };
    expect(cap(tool("a", { outputSchema })).output_schema).toBe(outputSchema);
    expect(cap(tool("a")).output_schema).toEqual({});
    // 2026-07-28 lets outputSchema be any schema: kept, and export wraps it for older clients.
    expect(cap(tool("a", { outputSchema: { type: "array" } })).output_schema).toEqual({ type: "array" });
  });

  it("an undeclared schema using 2020-12-only keywords gets MCP's 2020-12 declared", () => {
    const inputSchema = { type: "object", unevaluatedProperties: false };
    expect(cap(tool("a", { inputSchema })).input_schema).toEqual({ $schema: "https://json-schema.org/draft/2020-12/schema", ...inputSchema });
    const outputSchema = { type: "object", dependentRequired: { a: ["b"] } };
    expect(cap(tool("a", { outputSchema })).output_schema).toEqual({ $schema: "https://json-schema.org/draft/2020-12/schema", ...outputSchema });
  });

  it("annotations are kept exactly as given, nothing added (v1.2)", () => {
    expect(cap(tool("a"))).not.toHaveProperty("annotations");
    expect(cap(tool("a", { annotations: { readOnlyHint: true } })).annotations).toEqual({ readOnlyHint: true });
    expect(cap(tool("a", { annotations: {} })).annotations).toEqual({});
    const given = { title: "A", readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
    expect(cap(tool("a", { annotations: given })).annotations).toEqual(given);
  });

  it("an unknown annotation is named in warnings and not stored", () => {
    const { spec, warnings } = imported([tool("a", { annotations: { audience: ["user"] } })]);
    expect(spec.capabilities[0]!.annotations).not.toHaveProperty("audience");
    expect(warnings).toEqual(["mcp_toolspec.tools.0.annotations.audience: not an MCP tool annotation, not stored"]);
  });

  it("_meta, icons and execution are kept verbatim under their own names, every other key in mcp_extra", () => {
    const mcp = { _meta: { "x.y/z": [1, { a: null }] }, icons: [{ src: "https://e.example/i.png" }], execution: { taskSupport: "optional" } };
    const c = cap(tool("a", { ...mcp, futureKey: 7 }));
    expect(c).toMatchObject(mcp);
    expect(c._meta).toBe(mcp._meta);
    expect(c.mcp_extra).toEqual({ futureKey: 7 });
    const plain = cap(tool("a"));
    for (const key of ["_meta", "icons", "execution", "mcp_extra"]) expect(plain).not.toHaveProperty(key);
  });

  it("one of those keys without MCP's type is kept as it came in mcp_extra, with a warning", () => {
    const { spec, warnings } = imported([tool("a", { _meta: "x", icons: ["https://e.example/i.png"], execution: null })]);
    expect(spec.capabilities[0]!.mcp_extra).toEqual({ _meta: "x", icons: ["https://e.example/i.png"], execution: null });
    expect(spec.capabilities[0]).not.toHaveProperty("_meta");
    expect(warnings).toEqual([
      "mcp_toolspec.tools.0._meta: not an object as MCP defines it; kept as it came in mcp_extra",
      "mcp_toolspec.tools.0.icons: not an array of MCP Icon objects as MCP defines it; kept as it came in mcp_extra",
      "mcp_toolspec.tools.0.execution: not an object as MCP defines it; kept as it came in mcp_extra",
    ]);
  });

  it("refuses kept keys past their bounds, naming each key and its limit", () => {
    const big = (n: number) => "x".repeat(n);
    const err = refusal(() =>
      imported([
        tool("a", { _meta: { blob: big(MCP_KEPT_LIMITS._meta) } }),
        tool("b", { icons: [{ src: `data:image/png;base64,${big(MCP_KEPT_LIMITS.icons)}` }] }),
        tool("c", { icons: Array.from({ length: MAX_MCP_ICONS + 1 }, (_, i) => ({ src: `https://e.example/${i}.png` })) }),
        tool("d", { execution: { taskSupport: big(MCP_KEPT_LIMITS.execution) } }),
        tool("e", { futureKey: big(MCP_KEPT_LIMITS.mcp_extra) }),
        tool("f", { _meta: { a: { b: { c: {} } } } }),
      ]),
    );
    expect(err.issues).toEqual([
      { path: "mcp_toolspec.tools.0._meta", message: `larger than ${MCP_KEPT_LIMITS._meta} characters as JSON; the limit is ${MCP_KEPT_LIMITS._meta}` },
      { path: "mcp_toolspec.tools.1.icons", message: `larger than ${MCP_KEPT_LIMITS.icons} characters as JSON; the limit is ${MCP_KEPT_LIMITS.icons}` },
      { path: "mcp_toolspec.tools.2.icons", message: `${MAX_MCP_ICONS + 1} icons; at most ${MAX_MCP_ICONS}` },
      { path: "mcp_toolspec.tools.3.execution", message: `larger than ${MCP_KEPT_LIMITS.execution} characters as JSON; the limit is ${MCP_KEPT_LIMITS.execution}` },
      { path: "mcp_toolspec.tools.4", message: `the keys kept in mcp_extra ("futureKey") are larger than ${MCP_KEPT_LIMITS.mcp_extra} characters as JSON; the limit is ${MCP_KEPT_LIMITS.mcp_extra}` },
    ]);
    expect(err.message).toContain("mcp_toolspec.tools.0._meta");
  });

  it("the same bounds hold for a spec registered with those fields itself (invalid_spec)", () => {
    const spec = { ...imported([tool("a")]).spec };
    spec.capabilities = [{ ...spec.capabilities[0]!, _meta: { blob: "x".repeat(MCP_KEPT_LIMITS._meta) }, icons: [] }];
    expect(() => validateSpec(spec, new SchemaChecker())).toThrow(expect.objectContaining({ code: ErrorCode.InvalidSpec, issues: [{ path: "capabilities.0._meta", message: expect.stringContaining(`the limit is ${MCP_KEPT_LIMITS._meta}`) }] }));
  });

  it("warns that a paged tools/list result registers only the tools it holds", () => {
    const { spec, warnings } = importToolspec({ ...body([tool("a")]), mcp_toolspec: { tools: [tool("a")], nextCursor: "page-2", _meta: {} } }, { agentType: "srv" });
    expect(spec.capabilities).toHaveLength(1);
    expect(warnings).toEqual(["mcp_toolspec.nextCursor: tools/list has more pages; only the tools sent were registered"]);
  });

  it("warns about a name longer than the 128 characters MCP recommends", () => {
    const name = "n".repeat(200);
    const { spec, warnings } = imported([tool(name)]);
    expect(spec.capabilities[0]!.name).toBe(name);
    expect(warnings).toEqual(["mcp_toolspec.tools.0.name: longer than the 128 characters MCP recommends"]);
  });
});

describe("body → spec", () => {
  it("uses the body's fields and the subject's agent_type", () => {
    const { spec } = imported([tool("a")], { url: "https://srv.example/mcp", nats_subject: "tools.srv", consumer_group: "srv-workers", tenant_scope: "acme", kind: "tool" });
    expect(spec).toMatchObject({
      agent_type: "srv",
      version: "2.1.0",
      description: "an MCP server",
      owner_team: "team-x",
      url: "https://srv.example/mcp",
      nats_subject: "tools.srv",
      consumer_group: "srv-workers",
      tenant_scope: "acme",
      kind: "tool",
    });
  });

  it("defaults kind to mcp_server, owner_team to unknown, nats_subject to mcp.tools.<agent_type>, consumer_group to agent_type", () => {
    const { spec } = importToolspec({ mcp_toolspec: { tools: [tool("a")] }, description: "d", version: "1.0.0" }, { agentType: "srv" });
    expect(spec).toMatchObject({ kind: "mcp_server", owner_team: "unknown", nats_subject: "mcp.tools.srv", consumer_group: "srv" });
    expect(spec).not.toHaveProperty("url");
    expect(spec).not.toHaveProperty("tenant_scope");
  });

  it("completes a 1.0-like version with a warning and leaves others to the spec's check", () => {
    expect(imported([tool("a")], { version: "1.0" })).toMatchObject({ spec: { version: "1.0.0" }, warnings: ['version: "1.0" is not semver X.Y.Z; registered as "1.0.0"'] });
    expect(imported([tool("a")], { version: "v3" }).spec.version).toBe("3.0.0");
    expect(imported([tool("a")], { version: "1.2.3-rc.1" })).toMatchObject({ spec: { version: "1.2.3-rc.1" }, warnings: [] });
    // The A2A import's rule (one module): a prerelease and build metadata complete as for a card.
    expect(imported([tool("a")], { version: "V1.2-beta" }).spec.version).toBe("1.2.0-beta");
    expect(imported([tool("a")], { version: "1.2.3+build.7" }).spec.version).toBe("1.2.3");
    expect(imported([tool("a")], { version: "2024-05-01" }).spec.version).toBe("2024-05-01");
    const { spec } = imported([tool("a")], { version: "latest" });
    expect(spec.version).toBe("latest");
    expect(() => validateSpec(spec, new SchemaChecker())).toThrow(/version: must be semver/);
  });

  it("gives validateSpec a spec it accepts, with capability i for tool i", () => {
    const { spec } = validateSpec(imported([tool("a"), tool("b.c", { title: "BC" })]).spec, new SchemaChecker());
    expect(spec.capabilities.map((c) => [c.name, c.title])).toEqual([["a", undefined], ["b.c", "BC"]]);
  });
});

describe("refusals (invalid_card with the tool's path)", () => {
  it("a tool name that is not a capability name, saying which characters are allowed", () => {
    for (const name of ["get user", "a..b", ".a", "a.", "files/read", "é", "", "a,b"]) {
      const err = refusal(() => imported([tool(name)]));
      expect(err.issues).toEqual([{ path: "mcp_toolspec.tools.0.name", message: expect.stringContaining("[A-Za-z0-9_-]") }]);
      expect(err.message).toContain("mcp_toolspec.tools.0.name");
    }
    expect(refusal(() => imported([tool("x".repeat(257))])).issues![0]!.message).toContain("at most 256 characters");
    expect(refusal(() => imported([{ inputSchema: OBJECT }])).issues).toEqual([{ path: "mcp_toolspec.tools.0.name", message: "expected a string" }]);
  });

  it("a missing inputSchema, or one that is not an object schema", () => {
    expect(refusal(() => imported([{ name: "a" }])).issues![0]!.path).toBe("mcp_toolspec.tools.0.inputSchema");
    expect(refusal(() => imported([tool("a", { inputSchema: true })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.inputSchema");
    expect(refusal(() => imported([tool("a", { inputSchema: [] })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.inputSchema");
    for (const inputSchema of [{}, { type: "string" }, { properties: {} }, { type: ["object", "null"] }]) {
      expect(refusal(() => imported([tool("a", { inputSchema })])).issues).toEqual([
        { path: "mcp_toolspec.tools.0.inputSchema.type", message: expect.stringMatching(/^must be "object"/) },
      ]);
    }
  });

  it("duplicate tool names, naming both paths", () => {
    const err = refusal(() => imported([tool("a"), tool("b"), tool("a")]));
    expect(err.issues).toEqual([{ path: "mcp_toolspec.tools.2.name", message: 'duplicate tool name "a" (also at mcp_toolspec.tools.0.name)' }]);
  });

  it("names that differ only in case are different tools", () => {
    expect(imported([tool("getUser"), tool("getuser")]).spec.capabilities).toHaveLength(2);
  });

  it("no tools, too many tools, or no tool list", () => {
    expect(refusal(() => imported([])).issues).toEqual([{ path: "mcp_toolspec.tools", message: "at least one tool" }]);
    const many = Array.from({ length: MAX_TOOLS + 1 }, (_, i) => tool(`t${i}`));
    expect(refusal(() => imported(many)).issues![0]!.message).toMatch(/at most 256/);
    expect(imported(many.slice(0, MAX_TOOLS)).spec.capabilities).toHaveLength(MAX_TOOLS);
    expect(refusal(() => importToolspec({ mcp_toolspec: { tools: {} } }, { agentType: "srv" })).issues![0]!.path).toBe("mcp_toolspec.tools");
    expect(refusal(() => importToolspec({ mcp_toolspec: [tool("a")] }, { agentType: "srv" })).issues![0]!.path).toBe("mcp_toolspec");
    expect(refusal(() => importToolspec({} as ToolspecRegisterBody, { agentType: "srv" })).issues![0]!.path).toBe("mcp_toolspec");
  });

  it("wrong types for title, description, outputSchema and annotations", () => {
    expect(refusal(() => imported([tool("a", { title: 3 })])).issues).toEqual([{ path: "mcp_toolspec.tools.0.title", message: "expected a string" }]);
    expect(refusal(() => imported([tool("a", { description: null })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.description");
    expect(refusal(() => imported([tool("a", { outputSchema: "object" })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.outputSchema");
    expect(refusal(() => imported([tool("a", { annotations: [] })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.annotations");
    expect(refusal(() => imported([tool("a", { annotations: { readOnlyHint: "yes" } })])).issues).toEqual([
      { path: "mcp_toolspec.tools.0.annotations.readOnlyHint", message: "expected a boolean" },
    ]);
    expect(refusal(() => imported([tool("a", { annotations: { title: 1 } })])).issues![0]!.path).toBe("mcp_toolspec.tools.0.annotations.title");
  });

  it("a tool that is not an object", () => {
    expect(refusal(() => imported(["a"])).issues).toEqual([{ path: "mcp_toolspec.tools.0", message: "expected an MCP tool object" }]);
  });

  it("names every problem of every tool at once, with a message that names the first", () => {
    const err = refusal(() => imported([tool("ok"), { name: "bad name" }, tool("ok")]));
    expect(err.issues!.map((i) => i.path)).toEqual(["mcp_toolspec.tools.1.name", "mcp_toolspec.tools.1.inputSchema", "mcp_toolspec.tools.2.name"]);
    expect(err.message).toMatch(/^mcp_toolspec cannot be used: mcp_toolspec\.tools\.1\.name: .* \(and 2 more\)$/);
  });
});

describe("a whole JSON-RPC response to tools/list", () => {
  const response = { jsonrpc: "2.0", id: 2, result: { tools: [tool("read_file"), tool("write_file")] } };

  it("registers its result, with a warning that says so", () => {
    const r = importToolspec({ ...body([]), mcp_toolspec: response }, { agentType: "srv" });
    expect(r.spec.capabilities.map((c) => c.name)).toEqual(["read_file", "write_file"]);
    expect(r.warnings).toContain("mcp_toolspec: a whole JSON-RPC response; its result was registered (paths below are within the result)");
  });

  it("refuses an error response with its message, and anything else as before", () => {
    const e = refusal(() => importToolspec({ ...body([]), mcp_toolspec: { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } } }, { agentType: "srv" }));
    expect(e.issues?.[0]).toEqual({ path: "mcp_toolspec.error", message: 'a JSON-RPC error response, not a tools/list result: "Method not found"' });
    expect(refusal(() => importToolspec({ ...body([]), mcp_toolspec: { jsonrpc: "2.0", id: 2 } }, { agentType: "srv" })).issues?.[0]?.path).toBe("mcp_toolspec.tools");
  });
});
