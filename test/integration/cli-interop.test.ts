/**
 * The built `agent-registry` binary with A2A cards and MCP tool specs (PROTOCOL.md section 10)
 * against a real registry: `register` of a bare card or tools/list file (and of a register
 * body), `validate` of the same files offline, and `card` / `toolspec` printing exports that
 * parse as JSON. The fixtures are in test/fixtures/cli/.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { connect, RegistryClient } from "../../src/client/index.js";
import { configOf, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli, spawnCli, type CliProcess } from "../harness/cli.js";
import { waitFor } from "../harness/wait.js";

const CARD = "test/fixtures/cli/invoice-reader.card.json";
const BAD_SKILL_CARD = "test/fixtures/cli/bad-skill.card.json";
const TOOLS = "test/fixtures/cli/notes.tools.json";
const BODY = "test/fixtures/cli/translator.register.yaml";
const SERVER_JSON = "test/fixtures/cli/weather.server.json";

let server: NatsServerHandle;
let registry: TestRegistry;
let nc: NatsConnection;
let env: Record<string, string>;

beforeAll(async () => {
  await ensureBuilt();
  server = await startNatsServer({ jetstream: true });
  registry = await startRegistry(server.url, { minHeartbeatIntervalMs: 100 });
  env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(registry).prefix };
  nc = await connect({ servers: server.url });
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

const cli = (...args: string[]) => runCli(args, env);
/** A table's rows, split on runs of 2+ spaces. */
const rows = (text: string) => text.trimEnd().split("\n").map((l) => l.split(/ {2,}/));

describe("register and export against a running registry", () => {
  let card: CliProcess;
  let tools: CliProcess;
  let body: CliProcess;
  let server: CliProcess;

  beforeAll(async () => {
    card = spawnCli(["register", CARD, "--agent-type", "invoice-reader", "--interval", "200"], env);
    tools = spawnCli(["register", TOOLS, "--agent-type", "notes", "--description", "Notes of a vault", "--spec-version", "1.2.0", "--interval", "200"], env);
    body = spawnCli(["register", BODY, "--interval", "200"], env);
    server = spawnCli(["register", SERVER_JSON, "--owner-team", "acme", "--interval", "200"], env);
    for (const p of [card, tools, body, server]) await p.waitForLine(/press Ctrl-C/);
    // The CLI's queries send no min_revision: they run once the registry's view holds all four registrations.
    const revisions = [card, tools, body, server].map((p) => Number(/, revision (\d+)/.exec(p.lines().find((l) => l.startsWith("registered "))!)![1]));
    await new RegistryClient(nc, { prefix: env["REGISTRY_PREFIX"] }).discover({}, { minRevision: Math.max(...revisions) });
  });

  afterAll(async () => {
    for (const p of [card, tools, body, server]) await p?.stop("SIGKILL");
  });

  it("register CARD --agent-type: the reply line says how the card was read and what it lacks", () => {
    const line = card.lines().find((l) => l.startsWith("registered "))!;
    expect(line).toMatch(/^registered invoice-reader 2\.0\.1 as instance \S+, heartbeat every 200 ms, revision \d+, read as an A2A v0\.3 card; warnings: /);
    expect(line).toContain("a2a_card.defaultInputModes: missing");
  });

  it("lookup finds each skill of the card as a capability", async () => {
    const r = await cli("lookup", "invoice.due_date");
    expect(r.code, r.stderr).toBe(0);
    expect(rows(r.stdout)[1]).toEqual(["invoice-reader", "2.0.1", "ready", "1", "-", "agent.tasks.invoice-reader", "invoice-reader"]);
    expect(rows((await cli("lookup", "invoice.totals")).stdout)[1]?.[0]).toBe("invoice-reader");
  });

  it("register TOOLS --description --spec-version: an MCP server whose tools are capabilities", async () => {
    expect(tools.lines().find((l) => l.startsWith("registered "))).toMatch(/^registered notes 1\.2\.0 as instance \S+, heartbeat every 200 ms, revision \d+$/);
    const r = await cli("lookup", "search_notes", "--kind", "mcp_server", "--read-only");
    expect(rows(r.stdout)[1]?.slice(0, 3)).toEqual(["notes", "1.2.0", "ready"]);
  });

  it("register BODY: a register body file names its agent_type and fields itself", async () => {
    expect(body.lines().find((l) => l.startsWith("registered "))).toMatch(/^registered translator 1\.4\.0 as instance \S+, .*read as an A2A v1\.0 card$/);
    const got = JSON.parse((await cli("get", "translator", "--json")).stdout);
    expect(got.agent).toMatchObject({ owner_team: "lang", nats_subject: "agents.translator.tasks", display_name: "Translator" });
  });

  it("register SERVER_JSON: an MCP Registry server.json with its tools inside, the agent_type its name's last part", async () => {
    expect(server.lines().find((l) => l.startsWith("registered "))).toMatch(
      /^registered weather 1\.4\.0 as instance \S+, heartbeat every 200 ms, revision \d+; warnings: mcp_server\.repository, mcp_server\.packages: not kept/,
    );
    let found: string[][] = [];
    await waitFor(
      async () => {
        found = rows((await cli("lookup", "weather.forecast", "--kind", "mcp_server", "--read-only")).stdout);
        return found.length > 1;
      },
      { message: "the registry's view to show weather" },
    );
    expect(found[1]?.slice(0, 3)).toEqual(["weather", "1.4.0", "ready"]);
    const got = JSON.parse((await cli("get", "weather", "--json")).stdout);
    expect(got.agent).toMatchObject({ owner_team: "acme", display_name: "Weather", url: "https://weather.example.com/mcp", nats_subject: "mcp.tools.weather", kind: "mcp_server" });
  });

  it("card prints the A2A card itself (v1.0 by default, v0.3 on request); 4 for an unknown type", async () => {
    const v1 = await cli("card", "invoice-reader");
    expect(v1.code, v1.stderr).toBe(0);
    const parsed = JSON.parse(v1.stdout);
    expect(parsed).toMatchObject({ name: "Invoice Reader", version: "2.0.1" });
    expect(parsed.skills.map((s: any) => s.id)).toEqual(["invoice.totals", "invoice.due_date"]);
    expect(parsed.protocolVersion).toBeUndefined();

    const v03 = await cli("card", "invoice-reader", "--a2a-version", "0.3");
    expect(v03.code, v03.stderr).toBe(0);
    expect(JSON.parse(v03.stdout)).toMatchObject({ protocolVersion: "0.3.0", name: "Invoice Reader" });

    const withRevision = JSON.parse((await cli("card", "notes", "--json")).stdout);
    expect(withRevision).toMatchObject({ card: { name: expect.any(String) }, revision: expect.any(Number) });

    expect(await cli("card", "nope")).toMatchObject({ code: 4, stdout: "", stderr: "error: not_found: agent type nope is not registered\n" });
    expect(await cli("card", "invoice-reader", "--a2a-version", "2.0")).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --a2a-version: expected 1\.0 or 0\.3, got "2\.0"$/m) });
  });

  it("toolspec prints a tools/list result; 4 for an unknown type", async () => {
    const r = await cli("toolspec", "notes");
    expect(r.code, r.stderr).toBe(0);
    const parsed = JSON.parse(r.stdout);
    expect(Object.keys(parsed)).toEqual(["tools"]);
    expect(parsed.tools.map((t: any) => t.name)).toEqual(["search_notes", "append_note"]);
    expect(parsed.tools[0]).toMatchObject({ inputSchema: { type: "object", required: ["query"] }, annotations: { readOnlyHint: true } });
    // Any agent, a card's too: its skills as tools.
    expect(JSON.parse((await cli("toolspec", "invoice-reader")).stdout).tools.map((t: any) => t.name)).toEqual(["invoice.totals", "invoice.due_date"]);
    expect(await cli("toolspec", "nope")).toMatchObject({ code: 4, stdout: "" });
  });

  it("check CAPABILITY FILE: 0 when the payload fits, 1 with every problem's path when not, 2 for a file that is not JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-check-"));
    try {
      const write = (name: string, text: string) => {
        writeFileSync(join(dir, name), text);
        return join(dir, name);
      };
      const good = await cli("check", "search_notes", write("good.json", JSON.stringify({ query: "meeting", limit: 5 })), "--agent-type", "notes");
      expect(good.code, good.stderr).toBe(0);
      expect(good.stdout).toMatch(/good\.json: ok, fits the input schema of search_notes \(notes 1\.2\.0\)/);
      const bad = await cli("check", "search_notes", write("bad.json", JSON.stringify({ limit: 0 })));
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain("invalid, 2 problems");
      expect(bad.stdout).toContain("  payload.query: ");
      expect(bad.stdout).toContain("  payload.limit: ");
      const json = JSON.parse((await cli("check", "search_notes", join(dir, "bad.json"), "--json")).stdout);
      expect(json).toMatchObject({ valid: false, agent_type: "notes", version: "1.2.0" });
      expect(await cli("check", "search_notes", write("broken.json", "{ not json"))).toMatchObject({ code: 2, stdout: "" });
      expect((await cli("check", "nobody.does.this", join(dir, "good.json"))).code).toBe(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("register: the local check refuses a card the registry would refuse, with its path (1); a bare card needs --agent-type (2)", async () => {
    const bad = await cli("register", BAD_SKILL_CARD, "--agent-type", "greeter");
    expect(bad).toMatchObject({ code: 1, stdout: "" });
    expect(bad.stderr).toMatch(/^error: a2a_card\.skills\.1\.id: "Say Hello!" is not a capability name/m);
    const strict = await cli("register", CARD, "--agent-type", "strict-reader", "--strict");
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/^error: a2a_card\.defaultInputModes: missing/m);
    expect(await cli("register", CARD)).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --agent-type NAME is required: this A2A Agent Card names no agent_type$/m) });
    expect((await cli("register", TOOLS, "--agent-type", "notes2")).code).toBe(2);
  });

  it("Ctrl-C deregisters the card's instance and exits 0", async () => {
    expect(await card.stop("SIGINT")).toBe(0);
    const last = card.lines().at(-1)!;
    expect(last).toMatch(/^deregistered \(revision \d+\)$/);
    const revision = Number(/revision (\d+)/.exec(last)![1]);
    const after = await new RegistryClient(nc, { prefix: env["REGISTRY_PREFIX"] }).get("invoice-reader", { minRevision: revision });
    expect(after.agent).toMatchObject({ status: "deregistered", instances: [] });
  });
});

describe("validate, offline", () => {
  it("a good card: 0, with the card's deviations as warnings and the agent_type taken from the file name", async () => {
    const r = await runCli(["validate", CARD]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${CARD}: ok, A2A Agent Card v0.3 as AgentSpec invoice-reader 2.0.1\n`);
    expect(r.stderr).toMatch(/^warning: a2a_card\.defaultInputModes: missing; A2A v0\.3\.0 requires it$/m);
    expect(r.stderr).toMatch(/^warning: a2a_card\.skills\.0\.tags: missing/m);
    expect(r.stderr).not.toMatch(/^error:/m);
  });

  it("a card with a skill id that is not a capability name: 1, the path named", async () => {
    const r = await runCli(["validate", BAD_SKILL_CARD]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: a2a_card\.skills\.1\.id: "Say Hello!" is not a capability name/m);
    expect(r.stdout).toBe(`${BAD_SKILL_CARD}: invalid, 1 error(s)\n`);
  });

  it("--strict refuses the lenient card: each deviation an error", async () => {
    const r = await runCli(["validate", CARD, "--strict"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: a2a_card\.defaultInputModes: missing; A2A v0\.3\.0 requires it$/m);
    expect(r.stderr).not.toMatch(/^warning:/m);
  });

  it("a server.json: ok, its name's last part the agent_type, what it does not keep as warnings", async () => {
    const r = await runCli(["validate", SERVER_JSON]);
    expect(r).toMatchObject({ code: 0, stdout: `${SERVER_JSON}: ok, MCP server.json as AgentSpec weather 1.4.0\n` });
    expect(r.stderr).toMatch(/^warning: mcp_server\.repository, mcp_server\.packages: not kept/m);
  });

  it("a tools/list file with its flags, a register body, and --json", async () => {
    const tools = await runCli(["validate", TOOLS, "--agent-type", "notes", "--description", "Notes", "--spec-version", "1.0"]);
    expect(tools).toMatchObject({ code: 0, stdout: `${TOOLS}: ok, MCP tools/list result as AgentSpec notes 1.0.0\n` });
    expect(tools.stderr).toMatch(/^warning: version: "1\.0" is not semver X\.Y\.Z; registered as "1\.0\.0"$/m);
    expect((await runCli(["validate", TOOLS])).code).toBe(2);
    const asJson = JSON.parse((await runCli(["validate", BODY, "--json"])).stdout);
    expect(asJson).toMatchObject({ file: BODY, kind: "register_body", ok: true, agent_type: "translator", a2a_version: "1.0", errors: [] });
  });
});
