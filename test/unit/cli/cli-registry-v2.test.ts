/**
 * The CLI's offline use of a Registry v2 file: `validate FILE` reports the v2 startup errors
 * and warnings with paths; `sbom export --file` reads the file's fleet.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkRegistryFile } from "../../../src/cli/commands/validate.js";
import { loadFileFleet } from "../../../src/cli/file-fleet.js";
import { detectDocument } from "../../../src/cli/registration-document.js";

const FIXTURE = "test/fixtures/registry-v2/fleet-v2.json";
const fleet = (): Record<string, any> => JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<string, any>;
const dir = mkdtempSync(join(tmpdir(), "cli-v2-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("validate on a Registry v2 file", () => {
  it("is detected as a registry file, v1 documents too", () => {
    expect(detectDocument(fleet())).toMatchObject({ ok: true, kind: "registry_file" });
    expect(detectDocument({ schemaVersion: "1.0", tools: [] })).toMatchObject({ ok: true, kind: "registry_file" });
  });

  it("passes the fixture with its warnings, counted in the summary", () => {
    const r = checkRegistryFile(fleet());
    expect(r).toMatchObject({ ok: true, errors: [], summary: "Registry v2 file with 12 schema(s), 10 server(s), 5 composite tool(s), 5 agent(s), 5 warning(s)" });
    expect(r.warnings[0]).toBe('servers[2].provides[1]: dangling_provides: server member-service provides "get_member", but no tool of the file has it as source');
  });

  it("fails with every error, each with its path", () => {
    const d = fleet();
    d["tools"][1].inputSchema = { $ref: "#Nope:1.0.0" };
    d["tools"][22].depends[0].name = "read_nothing";
    const r = checkRegistryFile(d);
    expect(r.ok).toBe(false);
    expect(r.errors).toEqual([
      'tools[1].inputSchema: unresolved_ref: $ref "#Nope:1.0.0" names no schema of the file',
      "tools[22].depends[0]: missing: tool:read_and_file@1.0.0 depends on tool:read_nothing@1.0.0, which the file does not describe",
    ]);
  });

  it("names an unsupported schemaVersion", () => {
    expect(checkRegistryFile({ schemaVersion: "3.1", tools: [] }).errors).toEqual([expect.stringContaining('"3.1" is not supported')]);
  });
});

describe("sbom export --file on a Registry v2 file", () => {
  it("loads the file's servers, compositions and agents as a fleet", () => {
    const file = join(dir, "fleet.json");
    writeFileSync(file, JSON.stringify(fleet()));
    const r = loadFileFleet(file, 1_000);
    if (!r.ok) throw new Error(r.errors.join("\n"));
    const kinds = [...r.view.all()].map((a) => `${a.spec.kind}:${a.agent_type}`);
    expect(kinds).toHaveLength(20);
    expect(kinds).toEqual(expect.arrayContaining(["mcp_server:seat-service", "tool:book_trip", "agent:booking-agent"]));
    expect(r.view.get("booking-agent")?.spec.depends).toEqual([{ type: "tool", name: "book_trip", version: "1.0.0" }]);
  });

  it("refuses a broken v2 file with its errors", () => {
    const d = fleet();
    d["tools"][8].source.server = "sundial";
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify(d));
    expect(loadFileFleet(file)).toEqual({ ok: false, errors: [expect.stringContaining("tools[8].source.server: missing_server")] });
  });
});
