/**
 * The built `agent-registry` binary against a real registry: every command's table and JSON
 * output, exit codes (0 ok, 1 error, 2 usage, 3 unreachable, 4 not found), `register` until
 * SIGINT, `watch` replaying then following, and `--help` with an example everywhere.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { pickFreePort } from "../harness/ports.js";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { COMMANDS } from "../../src/cli/main.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli, spawnCli, type CliProcess } from "../harness/cli.js";

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[/;
const dir = mkdtempSync(join(tmpdir(), "cli-test-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

let server: NatsServerHandle;
let registry: TestRegistry;
let nc: NatsConnection;
let env: Record<string, string>;

beforeAll(async () => {
  await ensureBuilt();
  server = await startNatsServer({ jetstream: true });
  registry = await startRegistry(server.url, { minHeartbeatIntervalMs: 100 });
  const config = configOf(registry);
  env = { NATS_URL: server.url, REGISTRY_PREFIX: config.prefix, REGISTRY_EVENTS_STREAM: config.eventsStream };
  nc = await connect({ servers: server.url });
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

const cli = (...args: string[]) => runCli(args, env);
const json = async (...args: string[]) => {
  const r = await cli(...args, "--json");
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as any;
};
/** A table's rows, split on runs of 2+ spaces. */
const rows = (text: string) => text.trimEnd().split("\n").map((l) => l.split(/ {2,}/));

describe("against a running registry", () => {
  let register: CliProcess;
  let instanceId: string;

  beforeAll(async () => {
    register = spawnCli(["register", "examples/summarizer.yaml", "--interval", "200"], env);
    const line = await register.waitForLine(/^registered summarizer/);
    instanceId = /as instance (\S+),/.exec(line)![1]!;
    await register.waitForLine(/press Ctrl-C/);
    // A second agent without a heartbeat loop, so an operator can remove it for good.
    const translator = spec("translator", {
      owner_team: "lang",
      runtime: "acp-container",
      capabilities: [{ name: "text.translate", description: "translates text", input_schema: {}, output_schema: {}, tags: ["french"] }],
    }) as AgentSpecInput;
    const client = new RegistryClient(nc, { prefix: env["REGISTRY_PREFIX"] });
    const { revision } = await client.register({ spec: translator, heartbeat_interval_ms: 600_000 });
    // The CLI's queries send no min_revision: they run once the registry's view holds both agents.
    await client.get("translator", { minRevision: revision });
  });

  afterAll(async () => {
    await register?.stop("SIGKILL");
  });

  it("ls: a plain table (no colour on a pipe), filters, and --json", async () => {
    const r = await cli("ls");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    expect(rows(r.stdout)).toEqual([
      ["AGENT TYPE", "VERSION", "STATUS", "READY", "OWNER", "CAPABILITIES"],
      ["summarizer", "1.0.0", "ready", "1/1", "examples", "text.summarize"],
      ["translator", "1.0.0", "ready", "1/1", "lang", "text.translate"],
    ]);
    expect(rows((await cli("ls", "--owner", "lang")).stdout).map((r) => r[0])).toEqual(["AGENT TYPE", "translator"]);
    expect((await cli("ls", "--status", "deregistered")).stdout).toBe("no agents\n");
    const list = await json("ls", "--page-size", "1");
    expect(list.agents.map((a: any) => a.agent_type)).toEqual(["summarizer", "translator"]);
    expect(list.revision).toBeGreaterThan(0);
  });

  it("get: fields, capabilities and instances; --json; 4 for an unknown type", async () => {
    const r = await cli("get", "summarizer");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    expect(r.stdout).toMatch(/^agent_type: +summarizer$/m);
    expect(r.stdout).toMatch(/^status: +ready$/m);
    expect(r.stdout).toMatch(/^text\.summarize +0\.6 +english,fast +Short summary of a text$/m);
    expect(r.stdout).toMatch(new RegExp(`^${instanceId} +1\\.0\\.0 +ready +0 +200 +\\S+Z$`, "m"));
    expect((await json("get", "summarizer")).agent.instances.map((i: any) => i.instance_id)).toEqual([instanceId]);
    const missing = await cli("get", "nope");
    expect(missing).toMatchObject({ code: 4, stdout: "", stderr: "error: not_found: agent type nope is not registered\n" });
  });

  it("lookup: providers best first, an empty answer is not an error", async () => {
    const r = await cli("lookup", "text.summarize");
    expect(r.code).toBe(0);
    expect(rows(r.stdout)).toEqual([
      ["AGENT TYPE", "VERSION", "STATUS", "READY", "CONFIDENCE", "SUBJECT", "GROUP"],
      ["summarizer", "1.0.0", "ready", "1", "0.6", "agents.summarizer.tasks", "summarizer"],
    ]);
    expect(await cli("lookup", "nothing.here")).toMatchObject({ code: 0, stdout: "no providers of nothing.here\n" });
    expect((await json("lookup", "text.translate")).providers[0]).toMatchObject({ agent_type: "translator", ready_instances: 1 });
  });

  it("route: the winner with its score; 4 for no route, 2 without criteria", async () => {
    const r = await cli("route", "--skill", "text.summarize", "--tag", "english", "--runtime", "node");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^agent_type: +summarizer$/m);
    expect(r.stdout).toMatch(/^score: +1\.6$/m);
    expect(r.stdout).toMatch(/^CANDIDATE +SCORE$/m);
    const routed = await json("route", "--tag", "french");
    expect(routed).toMatchObject({ agent_type: "translator", nats_subject: "agent.tasks.translator", score: 0.5 });
    expect((await cli("route", "--skill", "nope.nothing")).code).toBe(4);
    const usage = await cli("route");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^error: route needs --skill, --tag or --runtime$/m);
  });

  it("find: by skill, tag or name, as ls prints; 2 without exactly one of them", async () => {
    const bySkill = await cli("find", "--skill", "text.summarize");
    expect(bySkill.code).toBe(0);
    expect(rows(bySkill.stdout)).toEqual([
      ["AGENT TYPE", "VERSION", "STATUS", "READY", "OWNER", "CAPABILITIES"],
      ["summarizer", "1.0.0", "ready", "1/1", "examples", "text.summarize"],
    ]);
    expect(rows((await cli("find", "--tag", "french")).stdout).map((r) => r[0])).toEqual(["AGENT TYPE", "translator"]);
    expect((await json("find", "--name", "translator")).agents.map((a: any) => a.agent_type)).toEqual(["translator"]);
    expect(await cli("find", "--name", "nobody")).toMatchObject({ code: 0, stdout: "no agents\n" });
    for (const args of [[], ["--skill", "a", "--tag", "b"]]) {
      const usage = await cli("find", ...args);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toMatch(/^error: find needs exactly one of --skill, --tag or --name$/m);
    }
  });

  it("search and discover", async () => {
    const s = await cli("search", "summarize", "text");
    expect(s.code).toBe(0);
    expect(rows(s.stdout)[0]).toEqual(["AGENT TYPE", "CAPABILITY", "SCORE"]);
    expect(rows(s.stdout)[1]?.slice(0, 2)).toEqual(["summarizer", "text.summarize"]);
    expect((await json("search", "translate", "--limit", "1")).results).toMatchObject([{ agent_type: "translator", capability: "text.translate" }]);
    expect(await cli("search", "zzzqqq")).toMatchObject({ code: 0, stdout: 'no match for "zzzqqq"\n' });

    const d = await cli("discover");
    expect(rows(d.stdout)).toEqual([
      ["AGENT", "STATUS", "CAPABILITIES"],
      ["summarizer", "ready", "text.summarize"],
      ["translator", "ready", "text.translate"],
    ]);
    expect((await json("discover", "--capability", "text.translate")).agents.map((a: any) => a.id)).toEqual(["translator"]);
  });

  it("watch --since 1h replays history, then prints live events, and stops on SIGINT", async () => {
    const watch = spawnCli(["watch", "--since", "1h"], env);
    try {
      const line = await watch.waitForLine(/agent\.registered +summarizer/);
      expect(line).toMatch(new RegExp(`^\\S+Z  #\\d+  agent\\.registered +summarizer  1\\.0\\.0 instance ${instanceId} \\(first instance\\)`));
      await watch.waitForLine(/capability\.changed +text\.translate +added, providers: translator$/);
      // Live: the operator removes the translator while the watch runs.
      const removed = await cli("deregister", "translator");
      expect(removed).toMatchObject({ code: 0, stdout: expect.stringMatching(/^deregistered every instance of translator \(revision \d+\); translator has no instance left\n$/) });
      await watch.waitForLine(/agent\.deregistered +translator +instance \S+ operator \(agent removed\)$/);
      await watch.waitForLine(/capability\.changed +text\.translate +removed, providers: none$/);
      expect(watch.stdout()).not.toMatch(ANSI);
    } finally {
      expect(await watch.stop("SIGINT")).toBe(0);
    }
    // Until its first line, not for a fixed time: a CLI that took over a second to start on a busy
    // machine printed nothing, and the test read an empty line.
    const events = spawnCli(["watch", "--since", "1", "--type", "agent.deregistered", "--json"], env);
    try {
      const first = await events.waitForLine(/^\{/, 20_000);
      expect(JSON.parse(first)).toMatchObject({ seq: expect.any(Number), event: { type: "registry.agent.deregistered", subject: "translator" } });
    } finally {
      await events.stop("SIGINT");
    }
  });

  it("deregister: 4 for an unknown type or instance", async () => {
    expect(await cli("deregister", "nope")).toMatchObject({ code: 4, stderr: "error: not_found: agent type nope is not registered\n" });
    const r = await cli("deregister", "summarizer", "no-such-instance");
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: unknown_instance: /);
  });

  it("register: 1 for a spec the registry refuses or that does not validate", async () => {
    const copycat = file("copycat.yaml", "agent_type: copycat\nversion: 1.0.0\ndescription: d\nowner_team: t\ncapabilities:\n  - {name: x.y, description: d, input_schema: {}, output_schema: {}}\nnats_subject: agents.summarizer.tasks\nconsumer_group: c\n");
    const conflict = await cli("register", copycat);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toMatch(/^error: conflict: .*agents\.summarizer\.tasks/m);
    const broken = await cli("register", file("broken.yaml", "agent_type: Broken\n"));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/^error: agent_type: /m);
  });

  it("register: SIGINT deregisters the instance and exits 0", async () => {
    expect(await register.stop("SIGINT")).toBe(0);
    expect(register.lines().at(-1)).toMatch(/^deregistered \(revision \d+\)$/);
    const revision = Number(/revision (\d+)/.exec(register.lines().at(-1)!)![1]);
    const after = await new RegistryClient(nc, { prefix: env["REGISTRY_PREFIX"] }).get("summarizer", { minRevision: revision });
    expect(after.agent).toMatchObject({ status: "deregistered", instances: [] });
  });
});

it("register: exit code 3 when no registry answers the deregistration at Ctrl-C", async () => {
  const own = await startRegistry(server.url, { minHeartbeatIntervalMs: 100 });
  const ownEnv = { ...env, REGISTRY_PREFIX: configOf(own).prefix };
  const proc = spawnCli(["register", "examples/summarizer.yaml", "--interval", "200", "--timeout", "1000"], ownEnv);
  await proc.waitForLine(/press Ctrl-C/);
  await own.stop();
  expect(await proc.stop("SIGINT")).toBe(3);
  expect(proc.stderr()).toMatch(/^deregister failed: no registry is listening on \S+\.deregister\.summarizer\.\S+$/m);
});

describe("without a registry", () => {
  it("validate: 0 for the example registry file and AgentSpec, 1 with every problem of a broken one", async () => {
    expect(await runCli(["validate", "deploy/config/agent-registry.json"])).toMatchObject({
      code: 0,
      stdout: "deploy/config/agent-registry.json: ok, registry file with 7 agent(s)\n",
    });
    expect(await runCli(["validate", "examples/summarizer.yaml"])).toMatchObject({ code: 0, stdout: "examples/summarizer.yaml: ok, AgentSpec summarizer 1.0.0\n" });
    const broken = file("broken.json", JSON.stringify({ agent_type: "Bad Type", version: "one", capabilities: [], colour: "red" }));
    const r = await runCli(["validate", broken]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${broken}: invalid, ${r.stderr.split("\n").filter((l) => l.startsWith("error:")).length} error(s)\n`);
    expect(r.stderr).toMatch(/^warning: colour: not an AgentSpec field/m);
    expect(r.stderr).toMatch(/^error: agent_type: /m);
    expect(r.stderr).toMatch(/^error: version: /m);
    expect(r.stderr).not.toMatch(ANSI);
    const asJson = await runCli(["validate", broken, "--json"]);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ file: broken, kind: "agent_spec", ok: false, warnings: [expect.stringMatching(/^colour/)] });
    expect((await runCli(["validate", join(dir, "missing.yaml")])).code).toBe(1);
  });

  it("3 when NATS or the registry cannot be reached", async () => {
    const port = await pickFreePort();
    const r = await runCli(["ls", "--nats", `nats://127.0.0.1:${port}`]);
    expect(r).toMatchObject({ code: 3, stdout: "" });
    expect(r.stderr).toMatch(/^error: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: /);
    const nobody = await runCli(["get", "x", "--nats", server.url, "--prefix", "nobody.home", "--timeout", "1000"]);
    expect(nobody).toMatchObject({ code: 3, stderr: "error: no registry is listening on nobody.home.get\n" });
  });

  it("2 for usage errors", async () => {
    expect((await runCli([])).code).toBe(2);
    expect(await runCli(["frobnicate"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: unknown command "frobnicate"/) });
    expect(await runCli(["ls", "--bogus"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: Unknown option '--bogus'/) });
    expect(await runCli(["get"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: missing argument: agent-registry get TYPE/) });
    expect(await runCli(["ls", "--status", "sleepy"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: --status: expected one of/) });
    expect((await runCli(["watch", "--since", "yesterday-ish"])).code).toBe(2);
  });

  it("serve with no nats-server to start stops with one line that says how to get one", async () => {
    // --embedded always skips the probe of the default URL, so nothing listening there matters.
    const noServer = await runCli(["serve", "--embedded", "always", "--http-port", "0"], { PATH: dirname(process.execPath) });
    expect(noServer.code).toBe(1);
    expect(noServer.stderr).toMatch(/^error: the registry could not start: REGISTRY_EMBEDDED=always, but no nats-server binary is on PATH: install nats-server \(Debian: apt-get install nats-server; .*\), or set NATS_URL/m);
    const badBin = await runCli(["serve", "--embedded", "always", "--http-port", "0"], { NATS_SERVER_BIN: "/nonexistent/nats-server" });
    expect(badBin.code).toBe(1);
    expect(badBin.stderr).toMatch(/^error: the registry could not start: REGISTRY_EMBEDDED=always, but NATS_SERVER_BIN=\/nonexistent\/nats-server is not an executable file: install/m);
  });

  // Twenty-odd node processes one after the other: on a loaded 2-core machine that took over
  // the default 30 s (and once 60 s), so they run four at a time, with room to spare.
  it("--help of every command shows its usage and an example", { timeout: 180_000 }, async () => {
    const names = [...COMMANDS.map((c) => c.name), "serve"];
    for (let i = 0; i < names.length; i += 4) {
      await Promise.all(
        names.slice(i, i + 4).map(async (name) => {
          const r = await runCli([name, "--help"], {}, 60_000);
          expect(r.code, name).toBe(0);
          expect(r.stdout, name).toMatch(new RegExp(`^Usage: agent-registry ${name}`));
          expect(r.stdout, name).toMatch(new RegExp(`^Examples?:\\n  \\$ agent-registry ${name}`, "m"));
        }),
      );
    }
    const top = await runCli(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/--inbox-prefix PREFIX/);
    expect(top.stdout).toMatch(/^Exit codes:/m);
    expect((await runCli(["--version"])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
