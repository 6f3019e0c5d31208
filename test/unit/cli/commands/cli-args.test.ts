import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS, main, parseCommandArgs } from "../../../../src/cli/main.js";
import { ExitCode, UsageError, describeFailure, type CliIo } from "../../../../src/cli/context.js";
import { formatEvent } from "../../../../src/cli/commands/watch.js";
import { describeAgentEvent } from "../../../../src/cli/commands/register.js";
import { routeRequest } from "../../../../src/cli/commands/route.js";
import { listRequest } from "../../../../src/cli/commands/ls.js";
import {
  ConflictError,
  InvalidSpecError,
  NoRouteError,
  NotFoundError,
  RegistryTimeoutError,
  RegistryUnreachableError,
  UnavailableError,
  UnknownInstanceError,
} from "../../../../src/client/errors.js";

function fakeIo(env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env,
    isTTY: false,
    interrupted: () => new Promise(() => undefined),
  };
  return { io, stdout: () => out.join(""), stderr: () => err.join("") };
}

const cmd = (name: string) => {
  const c = COMMANDS.find((x) => x.name === name);
  if (!c) throw new Error(`no command ${name}`);
  return c;
};

const dir = mkdtempSync(join(tmpdir(), "cli-args-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const goodSpec = {
  agent_type: "summarizer",
  version: "1.0.0",
  description: "summarises",
  owner_team: "docs",
  capabilities: [{ name: "text.summarize", description: "d", input_schema: {}, output_schema: {} }],
  nats_subject: "agents.summarizer.tasks",
  consumer_group: "summarizer",
};

describe("parsing", () => {
  it("collects repeatable flags and positionals", () => {
    const r = parseCommandArgs(cmd("route"), ["--skill", "text.summarize", "--tag", "a", "--tag", "b", "--json"]);
    expect(r.values).toMatchObject({ skill: "text.summarize", tag: ["a", "b"], json: true });
    expect(routeRequest(r.values)).toEqual({ skill: "text.summarize", tags: ["a", "b"] });
    const ls = parseCommandArgs(cmd("ls"), ["--status", "ready", "--owner", "docs", "--tag", "env=prod"]);
    expect(listRequest(ls)).toEqual({ status: ["ready"], owner_team: "docs", tags: { env: "prod" } });
    expect(listRequest(parseCommandArgs(cmd("ls"), ["--kind", "mcp_server"]))).toEqual({ kind: "mcp_server" });
    for (const name of ["lookup", "search"]) {
      expect(parseCommandArgs(cmd(name), ["x", "--kind", "tool", "--read-only"]).values).toMatchObject({ kind: "tool", "read-only": true });
    }
    // v1.2: keep to verified providers (docs/trust.md).
    const verified = parseCommandArgs(cmd("route"), ["--skill", "text.summarize", "--verified-only"]);
    expect(routeRequest(verified.values)).toEqual({ skill: "text.summarize", verified_only: true });
    expect(parseCommandArgs(cmd("lookup"), ["x", "--verified-only"]).values).toMatchObject({ "verified-only": true });
  });

  it("refuses unknown flags and wrong argument counts as usage errors", () => {
    expect(() => parseCommandArgs(cmd("ls"), ["--bogus"])).toThrow(UsageError);
    expect(() => parseCommandArgs(cmd("get"), [])).toThrow(/missing argument/);
    expect(() => parseCommandArgs(cmd("get"), ["a", "b"])).toThrow(/unexpected argument "b"/);
    expect(() => parseCommandArgs(cmd("deregister"), ["a", "b", "c"])).toThrow(UsageError);
    expect(parseCommandArgs(cmd("search"), ["many", "words", "here"]).args).toEqual(["many", "words", "here"]);
    expect(parseCommandArgs(cmd("get"), ["--help"]).values["help"]).toBe(true);
  });

  it("checks option values before anything is sent", () => {
    expect(() => routeRequest({})).toThrow(/--skill, --tag or --runtime/);
    expect(() => listRequest({ values: { status: ["alive"] } })).toThrow(UsageError);
    expect(() => listRequest({ values: { tag: ["novalue"] } })).toThrow(/KEY=VALUE/);
    expect(() => listRequest({ values: { kind: "robot" } })).toThrow(/^--kind: expected one of agent, mcp_server, tool, got "robot"$/);
  });
});

describe("help", () => {
  it("top-level help lists every command and the exit codes", async () => {
    const t = fakeIo();
    expect(await main(["--help"], t.io)).toBe(0);
    for (const c of COMMANDS) expect(t.stdout()).toContain(`  ${c.name} `);
    expect(t.stdout()).toContain("serve");
    expect(t.stdout()).toMatch(/Exit codes:[\s\S]*3 {2}registry or NATS unreachable[\s\S]*4 {2}not found/);
  });

  it("every command has --help with a usage example", async () => {
    for (const c of COMMANDS) {
      const t = fakeIo();
      expect(await main([c.name, "--help"], t.io)).toBe(0);
      expect(t.stdout()).toContain(`Usage: agent-registry ${c.name}`);
      expect(t.stdout()).toMatch(new RegExp(`Examples?:\\n  \\$ agent-registry ${c.name}\\b`));
      for (const flag of [...Object.keys(c.options), "nats", "json", "timeout"]) expect(t.stdout()).toContain(`--${flag}`);
    }
  });

  it("prints the version", async () => {
    const t = fakeIo();
    expect(await main(["--version"], t.io)).toBe(0);
    expect(t.stdout()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("exit codes", () => {
  it("2 for no command, an unknown command, a bad flag or a missing argument", async () => {
    for (const argv of [[], ["frobnicate"], ["ls", "--bogus"], ["lookup"], ["route"], ["watch", "--since", "yesterday"], ["ls", "--timeout", "soon"],
      ["lookup", "x", "--kind", "robot"], ["search", "x", "--kind", "robot"], ["discover", "--kind", "robot"], ["discover", "--read-only"],
      ["card"], ["toolspec"], ["card", "x", "--a2a-version", "2.0"], ["toolspec", "x", "--a2a-version", "0.3"], ["register", "x.json", "--kind", "tool"]]) {
      const t = fakeIo();
      expect(await main(argv, t.io), argv.join(" ")).toBe(ExitCode.Usage);
      expect(t.stderr().length).toBeGreaterThan(0);
      expect(t.stderr()).not.toMatch(/\n\s+at /); // no stack traces
    }
  });

  it("3 when NATS cannot be reached", async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const t = fakeIo({ NATS_URL: `nats://127.0.0.1:${port}` });
    expect(await main(["ls"], t.io)).toBe(ExitCode.Unreachable);
    expect(t.stderr()).toMatch(/^error: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+/);
    expect(t.stderr().trim().split("\n")).toHaveLength(1);
  });

  it("maps registry errors: 4 for 404s, 3 for no answer, 1 for other error replies", () => {
    expect(describeFailure(new NotFoundError("x")).code).toBe(4);
    expect(describeFailure(new UnknownInstanceError("x")).code).toBe(4);
    expect(describeFailure(new NoRouteError("x")).code).toBe(4);
    expect(describeFailure(new RegistryTimeoutError("registry.get", 100)).code).toBe(3);
    expect(describeFailure(new RegistryUnreachableError("registry.get")).code).toBe(3);
    expect(describeFailure(new ConflictError("x")).code).toBe(1);
    expect(describeFailure(new UnavailableError("x")).code).toBe(1);
    const withIssues = describeFailure(new ConflictError("bad", { issues: [{ path: "a.b", message: "m" }] }));
    expect(withIssues.lines).toEqual(["error: conflict: bad", "  a.b: m"]);
  });

  it("names each problem once when the registry's message repeats the first issue", () => {
    const issues = [
      { path: "capabilities.0.input_schema", message: "schema does not compile: type is invalid" },
      { path: "capabilities.1.name", message: "duplicate" },
    ];
    const e = new InvalidSpecError(`spec is invalid: ${issues[0]!.path}: ${issues[0]!.message} (and 1 more)`, { issues });
    expect(describeFailure(e).lines).toEqual([
      "error: invalid_spec: spec is invalid",
      "  capabilities.0.input_schema: schema does not compile: type is invalid",
      "  capabilities.1.name: duplicate",
    ]);
  });

  it("validate refuses what the registry refuses: a schema that does not compile, a remote $ref, a duplicate capability", async () => {
    const cap0 = goodSpec.capabilities[0]!;
    const bad = {
      ...goodSpec,
      capabilities: [
        { ...cap0, input_schema: { type: "objekt" } },
        { ...cap0, name: "text.other", output_schema: { $ref: "https://example.com/schema.json" } },
        { ...cap0, name: "text.other" },
      ],
    };
    const t = fakeIo();
    expect(await main(["validate", file("refused.json", JSON.stringify(bad)), "--json"], t.io)).toBe(1);
    const out = JSON.parse(t.stdout()) as { ok: boolean; errors: string[] };
    expect(out.ok).toBe(false);
    expect(out.errors.some((e) => e.startsWith("capabilities.0.input_schema: schema does not compile"))).toBe(true);
    expect(out.errors.some((e) => e.startsWith("capabilities.1.output_schema: ") && e.includes("https://example.com/schema.json"))).toBe(true);
    expect(out.errors.some((e) => e.startsWith("capabilities.2.name: duplicate"))).toBe(true);
  });

  it("validate: 0 for a good spec (JSON or YAML), 1 with one line per problem otherwise", async () => {
    const good = fakeIo();
    expect(await main(["validate", file("good.json", JSON.stringify(goodSpec))], good.io)).toBe(0);
    expect(good.stdout()).toContain("ok, AgentSpec summarizer 1.0.0");

    const yaml = fakeIo();
    const yamlText = `agent_type: summarizer\nversion: 1.0.0\ndescription: d\nowner_team: docs\nnats_subject: a.b\nconsumer_group: g\ncapabilities:\n  - name: text.summarize\n    description: d\n    input_schema: {}\n    output_schema: {}\n`;
    expect(await main(["validate", file("good.yaml", yamlText)], yaml.io)).toBe(0);

    const bad = fakeIo();
    const badSpec = { ...goodSpec, version: "one", capabilities: [{ ...goodSpec.capabilities[0], name: "Bad Name" }], extra: 1 };
    expect(await main(["validate", file("bad.json", JSON.stringify(badSpec))], bad.io)).toBe(1);
    const lines = bad.stderr().trim().split("\n");
    expect(lines).toContain("warning: extra: not an AgentSpec field (the registry drops it)");
    expect(lines.some((l) => l.startsWith("error: version: "))).toBe(true);
    expect(lines.some((l) => l.startsWith("error: capabilities.0.name: "))).toBe(true);

    const broken = fakeIo();
    expect(await main(["validate", file("broken.json", "{ nope")], broken.io)).toBe(1);
    expect(broken.stderr()).toMatch(/^error: invalid JSON/);

    const missing = fakeIo();
    expect(await main(["validate", join(dir, "absent.yaml")], missing.io)).toBe(1);
    expect(missing.stderr()).toContain("ENOENT");
  });

  it("validate: a registry file goes through the registry-file rules", async () => {
    const t = fakeIo();
    const registry = { agents: [{ card: { name: "Bad", version: "1.0.0", description: "d", skills: [] }, queueSubject: "q", runtime: "r" }] };
    expect(await main(["validate", file("registry.json", JSON.stringify(registry)), "--json"], t.io)).toBe(1);
    const out = JSON.parse(t.stdout()) as { kind: string; ok: boolean; errors: string[] };
    expect(out.kind).toBe("registry_file");
    expect(out.errors.length).toBeGreaterThan(0);
  });
});

describe("event and agent lines", () => {
  it("formats a watched event on one line", () => {
    const line = formatEvent({
      seq: 12,
      event: {
        specversion: "1.0",
        id: "e1",
        source: "agent-registry",
        type: "registry.agent.registered",
        time: "2025-01-01T00:00:00.000Z",
        subject: "summarizer",
        datacontenttype: "application/json",
        data: { agent_type: "summarizer", version: "1.0.0", instance_id: "i1", tenant_scope: null, first_instance: true, spec_changed: false, revision: 5 },
      },
    });
    expect(line).toBe("2025-01-01T00:00:00.000Z  #12  agent.registered      summarizer  1.0.0 instance i1 (first instance)");
    expect(line).not.toContain("\n");
  });

  it("describes SDK events for the register command", () => {
    expect(describeAgentEvent({ type: "error", phase: "register", error: new Error("no registry"), retryInMs: 1500 })).toEqual({
      stream: "stderr",
      line: "register failed: no registry; retrying in 1.5 s",
    });
  });
});

describe("connection flags", () => {
  it("fall back to the service's environment variables and build daemon-friendly options", async () => {
    const { connectOptions } = await import("../../../../src/cli/context.js");
    const { connectionOptions } = await import("../../../../src/client/connection.js");
    const o = connectOptions({ user: "flag-user" }, { NATS_URL: "nats://a:1, nats://b:2", NATS_USER: "env-user", NATS_PASSWORD: "pw", NATS_TLS_CA: "/ca.pem" }, 1500);
    expect(o).toMatchObject({ servers: "nats://a:1, nats://b:2", user: "flag-user", pass: "pw", tls: { ca: "/ca.pem" }, timeoutMs: 1500 });
    const c = connectionOptions(o);
    expect(c).toMatchObject({ servers: ["nats://a:1", "nats://b:2"], maxReconnectAttempts: -1, pingInterval: 20_000, reconnectTimeWait: 1000, noAsyncTraces: true, timeout: 1500 });
    expect(c.tls).toEqual({ caFile: "/ca.pem" });
    expect(Array.isArray(c.authenticator) && c.authenticator.length).toBe(1);
  });

  it("takes PEM text, creds text and an nkey seed inline, and reads them from files otherwise", async () => {
    const { connectionOptions } = await import("../../../../src/client/connection.js");
    const { nkeys } = await import("@nats-io/nats-core");
    const seed = new TextDecoder().decode(nkeys.createUser().getSeed());
    const pem = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----";
    const c = connectionOptions({ nkeySeed: seed, token: "t", tls: { ca: pem, cert: "/c.pem", key: "/k.pem" }, inboxPrefix: "_INBOX.agent", name: "x" });
    expect(c.tls).toEqual({ ca: pem, certFile: "/c.pem", keyFile: "/k.pem" });
    expect(c.inboxPrefix).toBe("_INBOX.agent");
    expect(Array.isArray(c.authenticator) && c.authenticator.length).toBe(2);
    const seedFile = file("seed.nk", `${seed}\n`);
    expect(Array.isArray(connectionOptions({ nkeySeed: seedFile }).authenticator)).toBe(true);
    expect(() => connectionOptions({ creds: join(dir, "missing.creds") })).toThrow(/ENOENT/);
  });
});
