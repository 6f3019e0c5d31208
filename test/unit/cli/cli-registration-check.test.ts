/**
 * registration-check.ts and `validate`: a register body judged offline by the service's own
 * path (registerMessage, specOfRegisterBody, the AgentSpec rules), every problem with its path.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { UsageError, type CliIo } from "../../../src/cli/context.js";
import { checkRegistration } from "../../../src/cli/registration-check.js";
import { agentTypeFromFileName } from "../../../src/cli/commands/validate.js";

const card = {
  protocolVersion: "0.3.0",
  name: "Greeter",
  description: "Says hello.",
  version: "1.0",
  url: "https://greeter.example.test",
  skills: [{ id: "greet", name: "Greet", description: "A greeting." }],
};
const tool = { name: "read_file", inputSchema: { type: "object" } };

function fakeIo() {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, isTTY: false, interrupted: () => new Promise(() => undefined) };
  return { io, stdout: () => out.join(""), stderr: () => err.join("") };
}
const dir = mkdtempSync(join(tmpdir(), "cli-check-"));
const file = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
};

describe("checkRegistration", () => {
  it("takes a #Name:Version ref as any schema offline, and still checks the rest of the schema", () => {
    const withRef = (input: unknown) => ({
      agent_type: "crm",
      version: "1.0.0",
      description: "crm",
      owner_team: "t",
      nats_subject: "agent.tasks.crm",
      consumer_group: "crm",
      capabilities: [{ name: "crm.add", description: "adds", input_schema: input, output_schema: {} }],
    });
    expect(checkRegistration("crm", { spec: withRef({ type: "object", properties: { c: { $ref: "#Customer:1.0.0", description: "who" } } }) })).toMatchObject({ ok: true });
    const broken = checkRegistration("crm", { spec: withRef({ properties: { c: { $ref: "#Customer:1.0.0" }, d: { type: "nope" } } }) });
    expect(broken).toMatchObject({ ok: false, errors: [expect.stringMatching(/^capabilities\.0\.input_schema/)] });
  });

  it("a lenient card: ok, the import's warnings first, the A2A version it was read as", () => {
    const r = checkRegistration("greeter", { agent_type: "greeter", a2a_card: card });
    expect(r).toMatchObject({ ok: true, errors: [], summary: "AgentSpec greeter 1.0.0", a2aVersion: "0.3" });
    expect(r.warnings).toContain("a2a_card.capabilities: missing; A2A v0.3.0 requires it");
    expect(r.warnings).toContain('a2a_card.version: "1.0" is not semver; registered as 1.0.0');
  });

  it("the same card under strict: each deviation an error with its path", () => {
    const r = checkRegistration("greeter", { agent_type: "greeter", a2a_card: card, strict: true });
    expect(r.ok).toBe(false);
    expect(r.errors).toContain("a2a_card.capabilities: missing; A2A v0.3.0 requires it");
    expect(r.warnings).toEqual([]);
  });

  it("what the service refuses before the spec: a misplaced field, a mismatched agent_type, a bad instance_id", () => {
    const spec = { agent_type: "a", version: "1.0.0" };
    expect(checkRegistration("a", { spec, owner_team: "t" }).errors).toEqual(["owner_team: set it inside spec"]);
    expect(checkRegistration("b", { agent_type: "a", a2a_card: card }).errors).toEqual(["agent_type: must be b"]);
    expect(checkRegistration("a", { a2a_card: card, instance_id: "not an id" }).errors[0]).toMatch(/^instance_id: /);
  });

  it("a tool spec's problems under mcp_toolspec, the built spec's under its own fields", () => {
    const noSchema = checkRegistration("files", { mcp_toolspec: { tools: [{ name: "read_file" }] }, description: "d", version: "1.0.0" });
    expect(noSchema.errors.some((e) => e.startsWith("mcp_toolspec.tools.0.inputSchema: "))).toBe(true);
    const noDescription = checkRegistration("files", { mcp_toolspec: { tools: [tool] }, version: "1.0.0" });
    expect(noDescription.errors.some((e) => e.startsWith("description: "))).toBe(true);
    expect(checkRegistration("files", { mcp_toolspec: { tools: [tool] }, description: "d", version: "1.0.0" })).toMatchObject({ ok: true, summary: "AgentSpec files 1.0.0" });
  });

  it("a spec that names no agent_type: its validation says so", () => {
    expect(checkRegistration(undefined, { spec: { version: "1.0.0" } }).errors.some((e) => e.startsWith("agent_type: "))).toBe(true);
  });
});

describe("validate's agent_type for a file that names none", () => {
  it("is the file name up to its first dot, lower-cased; otherwise --agent-type is asked for", () => {
    expect(agentTypeFromFileName("cards/Invoice-Reader.card.json")).toBe("invoice-reader");
    expect(agentTypeFromFileName("notes.yaml")).toBe("notes");
    expect(() => agentTypeFromFileName("my card.json")).toThrow(UsageError);
    expect(() => agentTypeFromFileName("my card.json")).toThrow('my card.json names no agent_type, and "my card" (its file name) is not one: pass --agent-type NAME');
  });
});

describe("validate", () => {
  it("a card: the summary names what the file was and the spec it registers as; --json adds agent_type and a2a_version", async () => {
    const path = file("greeter.json", card);
    const t = fakeIo();
    expect(await main(["validate", path], t.io)).toBe(0);
    expect(t.stdout()).toBe(`${path}: ok, A2A Agent Card v0.3 as AgentSpec greeter 1.0.0\n`);
    expect(t.stderr()).toMatch(/^warning: a2a_card\.capabilities: missing/m);
    const j = fakeIo();
    expect(await main(["validate", path, "--agent-type", "hello", "--json"], j.io)).toBe(0);
    expect(JSON.parse(j.stdout())).toMatchObject({ kind: "a2a_card", ok: true, agent_type: "hello", a2a_version: "0.3" });
  });

  it("1 for a document of no known kind, 2 for a flag that does not fit the file", async () => {
    const unknown = fakeIo();
    expect(await main(["validate", file("other.json", { hello: "world" })], unknown.io)).toBe(1);
    expect(unknown.stderr()).toMatch(/^error: not a document the registry takes: a document with hello; expected /);
    expect(unknown.stdout()).toMatch(/: invalid, not recognised\n$/);
    const misfit = fakeIo();
    expect(await main(["validate", file("spec.json", { agent_type: "a" }), "--strict"], misfit.io)).toBe(2);
    expect(misfit.stderr()).toBe("error: --strict completes an A2A card, and this file is an AgentSpec\n");
    const registry = fakeIo();
    expect(await main(["validate", "deploy/config/agent-registry.json", "--agent-type", "x"], registry.io)).toBe(2);
  });
});
