/**
 * Specs meant to hijack routing or other subjects, against a real nats-server (issue 14,
 * findings 11 and 12): a weight that wins every route, and nats_subject / consumer_group
 * values that NATS or the registry itself must own; dependency names with control or bidi
 * characters, which the CLI, logs and the web page would print. Each is refused with
 * `invalid_spec` and its path, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

let sentinels = 0;

/** Registers a refused spec, then checks nothing of it was stored (read after a later write). */
async function refused(agentType: string, overrides: Record<string, unknown>): Promise<{ path: string; message: string }> {
  const r = await c.request(`register.${agentType}`, { spec: spec(agentType, overrides) });
  expect(r.ok, `${agentType} ${JSON.stringify(overrides)}`).toBe(false);
  expect(r.body.error.code).toBe("invalid_spec");
  const sentinel = `sentinel-${++sentinels}`;
  const later = await c.request(`register.${sentinel}`, { spec: spec(sentinel) });
  const got = await c.request("get", { agent_type: agentType, min_revision: later.body.revision });
  expect(got.body.error?.code).toBe("not_found");
  return r.body.error.issues[0];
}

describe("routing weight", () => {
  it("refuses a weight above the bound, so no agent can win every route", async () => {
    for (const weight of [1e308, 1001]) expect((await refused("heavy", { weight })).path).toBe("weight");
    const ok = await c.request("register.heavy", { spec: spec("heavy", { weight: 1000, capabilities: [{ name: "route.me", description: "", input_schema: {}, output_schema: {} }] }) });
    expect(ok.ok).toBe(true);
    const routed = await c.request("route", { skill: "route.me", min_revision: ok.body.revision });
    expect(routed.body).toMatchObject({ agent_type: "heavy", score: 1000 });
  });
});

describe("subject policy", () => {
  it("holds every nats_subject to the configured template, as deploy/ turns it on", async () => {
    await using strict = await startRegistry(server.url, { subjectPolicy: "agent.tasks.{agent_type}" });
    const client = await RawClient.connect(server.url, configOf(strict).prefix);
    try {
      const ok = await client.request("register.code-reviewer", { spec: spec("code-reviewer", { nats_subject: "agent.tasks.code-reviewer" }) });
      expect(ok.ok).toBe(true);
      // Another team's subject, even while that team is down, and any subject off the template.
      for (const subject of ["agent.tasks.bug-fixer", "agent.tasks.squatter.x", "tasks.squatter"]) {
        const r = await client.request("register.squatter", { spec: spec("squatter", { nats_subject: subject }) });
        expect(r.body.error).toMatchObject({ code: "invalid_spec", issues: [{ path: "nats_subject", message: "must be agent.tasks.squatter (subject policy agent.tasks.{agent_type})" }] });
      }
    } finally {
      await client.close();
    }
  });
});

describe("nats_subject and consumer_group", () => {
  const hostile: Array<[string, string]> = [
    ["NUL", "agent.tasks.a\u0000b"],
    ["a control character", "agent.tasks.a\u0007b"],
    ["DEL", "agent.tasks.\u007f"],
    ["a C1 control character", "agent.tasks.\u0085x"],
    ["$KV.", "$KV.agent-registry.agents.victim"],
    ["$JS.", "$JS.API.STREAM.DELETE.KV_agent-registry"],
    ["$SYS.", "$SYS.REQ.SERVER.PING"],
    ["_INBOX.", "_INBOX.abc.def"],
    ["a private inbox", "_INBOX_coordinator.abc"],
  ];

  it.each(hostile)("refuses a nats_subject with %s", async (_what, subject) => {
    expect((await refused("hijack", { nats_subject: subject })).path).toBe("nats_subject");
  });

  it("refuses a nats_subject under the registry's own prefix", async () => {
    const prefix = configOf(reg).prefix;
    for (const subject of [prefix, `${prefix}.register.victim`, `${prefix}.agent.registered.x`]) {
      const issue = await refused("hijack", { nats_subject: subject });
      expect(issue).toMatchObject({ path: "nats_subject" });
      expect(issue.message).toContain(prefix);
    }
  });

  it("refuses a consumer_group with control characters", async () => {
    for (const group of ["g\u0000", "g\u001b[31m"]) expect((await refused("hijack", { consumer_group: group })).path).toBe("consumer_group");
  });

  it("still accepts ordinary subjects, UTF-8 included", async () => {
    for (const [type, subject] of [["plain", "agent.tasks.plain"], ["utf", "tâches.résumé"], ["dollar", "agent.$tasks"]] as const) {
      const r = await c.request(`register.${type}`, { spec: spec(type, { nats_subject: subject }) });
      expect(r.ok, subject).toBe(true);
    }
  });
});

describe("dependency names", () => {
  it.each([
    ["RIGHT-TO-LEFT OVERRIDE", "evil\u202Egnp", "U+202E at 4"],
    ["NUL", "fetch\u0000", "U+0000 at 5"],
    ["an escape sequence", "\u001b[31mred", "U+001B at 0"],
    ["DEL", "fe\u007ftch", "U+007F at 2"],
    ["a left-to-right isolate", "a\u2066b", "U+2066 at 1"],
    ["a zero-width space", "fe\u200Btch", "U+200B at 2"],
    ["a right-to-left mark", "x\u200F", "U+200F at 1"],
  ])("refuses a dependency name with %s, naming the field path", async (_what, name, where) => {
    const issue = await refused("bidi-dep", { depends: [{ type: "agent", name: "ok-dep", version: "1.0.0" }, { type: "tool", name, version: "1.0.0" }] });
    expect(issue).toEqual({ path: "depends.1.name", message: `holds ${where}: control characters and invisible formatting characters (bidi, zero-width) are not allowed` });
  });

  it("still accepts printable dependency names, right-to-left letters included", async () => {
    const r = await c.request("register.rtl-dep", { spec: spec("rtl-dep", { depends: [{ type: "tool", name: "שלום", version: "1.0.0" }] }) });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(r.body.warnings).toEqual(["depends.0: tool:שלום@1.0.0 is missing"]);
  });
});
