/**
 * Tool specs shaped like real `tools/list` results (test/fixtures/mcp, written for these tests):
 * a TypeScript-SDK server with draft-07 schemas, a 2025-11-25 server with titles, icons,
 * execution and `_meta`, a Python server with undeclared 2020-12 schemas, and a 2026-07-28
 * server with `x-mcp-header` and an array outputSchema. Each is imported, validated as the
 * registry validates every spec, and exported back.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { exportToolspec, importToolspec, type McpToolspec } from "../../../../../src/domain/interop/mcp/index.js";
import { SchemaChecker } from "../../../../../src/domain/spec/schema-check.js";
import { validateSpec } from "../../../../../src/domain/spec/validation.js";

const checker = new SchemaChecker();
const fixture = (name: string): McpToolspec => JSON.parse(readFileSync(new URL(`../../../../fixtures/mcp/${name}`, import.meta.url), "utf8"));
const body = (toolspec: McpToolspec) => ({ mcp_toolspec: toolspec, description: "fixture server", version: "1.4.0", owner_team: "team-mcp" });

function register(name: string, agentType: string) {
  const toolspec = fixture(name);
  const imported = importToolspec(body(toolspec), { agentType });
  const { spec } = validateSpec(imported.spec, checker);
  return { toolspec, imported, spec, exported: exportToolspec(spec) };
}

describe("fixture tool specs", () => {
  it("a TypeScript-SDK server with draft-07 schemas registers and exports each tool back", () => {
    const { toolspec, imported, spec, exported } = register("notes-server.json", "notes");
    expect(imported.warnings).toEqual([]);
    expect(spec.kind).toBe("mcp_server");
    expect(spec.capabilities.map((c) => c.name)).toEqual(["list_notes", "write_note", "move_note"]);
    const [list, write, move] = spec.capabilities;
    // As given: a read-only tool gets no destructiveHint (v1.2).
    expect(list!.annotations).toEqual({ title: "List notes", readOnlyHint: true, openWorldHint: false });
    expect(list!.output_schema).toEqual({});
    expect(write!.output_schema).toEqual(toolspec.tools[1]!.outputSchema);
    // No description: the name stands in, as MCP displays a tool without a title.
    expect(move!.description).toBe("move_note");
    expect(move!.input_schema).toEqual(toolspec.tools[2]!.inputSchema);

    expect(exported.tools[0]).toEqual(toolspec.tools[0]);
    expect(exported.tools[1]).toEqual(toolspec.tools[1]);
    expect(exported.tools[2]).toEqual({ ...toolspec.tools[2], description: "move_note" });
  });

  it("a 2025-11-25 server keeps titles, icons, execution and _meta, and names with dots and capitals", () => {
    const { toolspec, spec, exported } = register("travel-server.json", "travel");
    const [search, book, status] = spec.capabilities;
    expect(spec.capabilities.map((c) => c.name)).toEqual(["flights.search", "bookFlight", "Get-Airport-Status"]);
    expect(search!.title).toBe("Search flights");
    expect(search).toMatchObject({ icons: toolspec.tools[0]!["icons"], execution: { taskSupport: "optional" }, _meta: toolspec.tools[0]!["_meta"] });
    expect(book!.execution).toEqual({ taskSupport: "required" });
    for (const c of [search, book, status]) expect(c!.mcp_extra).toBeUndefined();
    expect(status).not.toHaveProperty("_meta");
    // Undeclared and using prefixItems: MCP reads it as 2020-12, and now so does the registry.
    expect(book!.input_schema).toEqual({ $schema: "https://json-schema.org/draft/2020-12/schema", ...toolspec.tools[1]!.inputSchema });
    expect(status!.description).toBe("Get-Airport-Status");

    expect(exported.tools[0]).toEqual(toolspec.tools[0]);
    expect(exported.tools[1]).toEqual({ ...toolspec.tools[1], inputSchema: book!.input_schema });
    expect(Object.keys(exported.tools[0]!)).toEqual(expect.arrayContaining(["icons", "execution", "_meta"]));
  });

  it("a Python server with undeclared schemas, $defs and $ref, and partial annotations", () => {
    const { toolspec, spec, exported } = register("docs-server.json", "docs");
    const [search, page, ping] = spec.capabilities;
    // Nothing 2020-12-only in them: they mean the same to the registry and stay as they came.
    expect(search!.input_schema).toEqual(toolspec.tools[0]!.inputSchema);
    expect(search!._meta).toEqual({ _fastmcp: { tags: ["docs"] } });
    expect(page!.description).toBe("Get a page");
    expect(page!.title).toBe("Get a page");
    expect(ping!.description).toBe("Health check");
    expect(ping!.title).toBeUndefined();
    expect(exported.tools[2]).toEqual({ name: "ping", description: "Health check", inputSchema: { type: "object" }, annotations: { title: "Health check" } });
    expect(exported.tools[0]).toEqual(toolspec.tools[0]);
  });

  it("a 2026-07-28 server with x-mcp-header and an array outputSchema", () => {
    const { toolspec, spec, exported } = register("spanner-server.json", "spanner");
    expect(spec.capabilities[0]!.output_schema).toEqual(toolspec.tools[0]!.outputSchema);
    // Exported for clients of every version: an array result is wrapped, as structuredContent must be an object before 2026-07-28.
    expect(exported.tools[0]!.outputSchema).toEqual({ type: "object", properties: { payload: toolspec.tools[0]!.outputSchema }, required: ["payload"] });
    expect(exported.tools[0]!.inputSchema).toEqual(toolspec.tools[0]!.inputSchema);
  });

  it("uses the body's fields and the documented defaults for the rest", () => {
    const { spec } = register("docs-server.json", "docs");
    expect(spec).toMatchObject({
      agent_type: "docs",
      version: "1.4.0",
      description: "fixture server",
      owner_team: "team-mcp",
      nats_subject: "mcp.tools.docs",
      consumer_group: "docs",
      kind: "mcp_server",
    });
  });
});
