/**
 * deploy/nats/auth.conf against a real nats-server: what each role may publish and read.
 * Positives poll with a deadline. For negatives, the same client publishes a permitted
 * marker right after the forbidden message; one connection's messages reach a subscriber in
 * order, so once the marker has arrived the forbidden one would have arrived too.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Kvm } from "@nats-io/kv";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { PermissionViolationError, connect, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, natsServerVersion, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { QUERY_OPS, subjects } from "../../src/protocol/subjects.js";
import { startAudit } from "../harness/audit.js";
import { sql } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { waitFor } from "../harness/wait.js";
import { AUTH_CONF, passwordsOf } from "../harness/auth-conf.js";

/** user -> password, read from the file so the test follows it. */
const PASSWORDS = passwordsOf(AUTH_CONF);
const S = subjects("registry");

interface Client {
  nc: NatsConnection;
  violations: PermissionViolationError[];
}

let server: NatsServerHandle;
const clients: Client[] = [];

async function connectAs(user: string, inboxPrefix?: string): Promise<Client> {
  const pass = user === "spy" ? "spy" : PASSWORDS.get(user);
  if (pass === undefined) throw new Error(`no user ${user} in auth.conf`);
  const nc = await connect({ servers: server.url, user, pass, ...(inboxPrefix ? { inboxPrefix } : {}) });
  const client: Client = { nc, violations: [] };
  void (async () => {
    for await (const s of nc.status()) if (s.type === "error" && s.error instanceof PermissionViolationError) client.violations.push(s.error);
  })();
  clients.push(client);
  return client;
}

async function until(what: string, cond: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Records every subject a subscription receives. With `respond`, it also answers requests
 * as the service would; watchers of JetStream subjects must not, or they would race the
 * server's own replies.
 */
function observe(sub: Subscription, seen: string[] = [], respond = false): string[] {
  void (async () => {
    for await (const m of sub) {
      seen.push(m.subject);
      if (respond && m.reply) m.respond(JSON.stringify({ ok: true, subject: m.subject }));
    }
  })();
  return seen;
}

/** Publishes `forbidden` then the permitted `marker` on one connection; asserts only the marker arrives. */
async function expectPublishRefused(client: Client, seen: string[], forbidden: string, marker: string): Promise<void> {
  const before = seen.length;
  client.nc.publish(forbidden, "{}");
  client.nc.publish(marker, "{}");
  await until(`marker ${marker}`, () => seen.slice(before).includes(marker));
  expect(seen.slice(before)).not.toContain(forbidden);
  await until(`violation on ${forbidden}`, () => client.violations.some((v) => v.operation === "publish" && v.subject === forbidden));
}

/** The permission violation a failed request carries (nats.js wraps it in a RequestError). */
function violationOf(err: unknown): PermissionViolationError | undefined {
  if (err instanceof PermissionViolationError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof PermissionViolationError ? cause : undefined;
}

async function expectRequestRefused(client: Client, subject: string): Promise<void> {
  const err = await client.nc.request(subject, "{}", { timeout: 2_000 }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(violationOf(err)?.subject, `request on ${subject}`).toBe(subject);
}

const haveServer = findNatsServerBinary() !== null;

describe.skipIf(!haveServer)("deploy/nats/auth.conf on a real nats-server", () => {
  let registry: Client;
  let registrySeen: string[];
  let spy: Client;
  let spySeen: string[];
  let kvSeen: string[];

  beforeAll(async () => {
    // A spy with no permissions lets the test watch subjects the registry role may not read.
    const configText = AUTH_CONF.replace(/users:\s*\[/, 'users: [\n    { user: "spy", password: "spy" }');
    server = await startNatsServer({ configText, jetstream: true });
    registry = await connectAs("registry");
    registrySeen = observe(registry.nc.subscribe("registry.>", { queue: "agent-registry" }), [], true);
    kvSeen = observe(registry.nc.subscribe("$KV.agent-registry.>"));
    spy = await connectAs("spy");
    spySeen = observe(spy.nc.subscribe("$JS.API.>"));
    observe(spy.nc.subscribe("registry.>"), spySeen);
    await registry.nc.flush();
    await spy.nc.flush();
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.nc.close()));
    await server?.stop();
  });

  it("has the documented users", () => {
    expect([...PASSWORDS.keys()].sort()).toEqual(
      ["agent-acme-invoices", "agent-bug-fixer", "agent-code-reviewer", "audit", "coordinator", "coordinator-acme", "operator", "registry"].sort(),
    );
  });

  it("lets an agent register, heartbeat and deregister as itself, with replies on its private inbox", async () => {
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    for (const subject of [S.register("code-reviewer"), S.heartbeat("code-reviewer", "i-1"), S.deregisterInstance("code-reviewer", "i-1")]) {
      const reply = await agent.nc.request(subject, "{}", { timeout: 2_000 });
      expect(reply.json()).toEqual({ ok: true, subject });
    }
    expect(agent.violations).toEqual([]);
  });

  it("stops an agent from writing as another agent type", async () => {
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const marker = S.register("code-reviewer");
    await expectPublishRefused(agent, registrySeen, S.register("bug-fixer"), marker);
    await expectPublishRefused(agent, registrySeen, S.heartbeat("bug-fixer", "i-1"), marker);
    await expectPublishRefused(agent, registrySeen, S.deregisterInstance("bug-fixer", "i-1"), marker);
    // removing every instance of a type, even its own, is an operator action
    await expectPublishRefused(agent, registrySeen, S.deregisterType("code-reviewer"), marker);
    await expectPublishRefused(agent, registrySeen, S.query("lookup"), marker);
  });

  it("gives agents no KV or JetStream API rights", async () => {
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const before = kvSeen.length;
    agent.nc.publish("$KV.agent-registry.x", "{}");
    agent.nc.publish("$KV.agent-registry.agents.bug-fixer", "{}");
    const marker = S.register("code-reviewer");
    agent.nc.publish(marker, "{}");
    await until("marker", () => registrySeen.includes(marker));
    await registry.nc.flush();
    expect(kvSeen.slice(before)).toEqual([]);
    await until("KV violations", () => agent.violations.filter((v) => v.subject.startsWith("$KV.agent-registry.")).length === 2);

    await expectPublishRefused(agent, spySeen, "$JS.API.STREAM.DELETE.KV_agent-registry", "registry.heartbeat.code-reviewer.i-1");
    await expectRequestRefused(agent, "$JS.API.INFO");
    await expect(jetstreamManager(agent.nc)).rejects.toThrow();
  });

  it("lets only the registry publish the heard fan-out of memory liveness: no other role can forge liveness", async () => {
    const fanout = `${S.replicaHeard}.replica-1`;
    const before = spySeen.length;
    registry.nc.publish(fanout, "v1 1\n");
    await until("the registry's fan-out batch", () => spySeen.slice(before).includes(fanout));
    expect(registry.violations).toEqual([]);
    const forged = `${S.replicaHeard}.forged`;
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    await expectPublishRefused(agent, spySeen, forged, S.heartbeat("code-reviewer", "i-1"));
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    await expectPublishRefused(coordinator, spySeen, forged, S.query("lookup"));
    const operator = await connectAs("operator", "_INBOX_operator");
    await expectPublishRefused(operator, spySeen, forged, S.query("lookup"));
  });

  it("stops a coordinator from registering or heartbeating, but answers its queries", async () => {
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    const reply = await coordinator.nc.request(S.query("lookup"), "{}", { timeout: 2_000 });
    expect(reply.json()).toMatchObject({ ok: true });
    const marker = S.query("list");
    await expectPublishRefused(coordinator, registrySeen, S.register("code-reviewer"), marker);
    await expectPublishRefused(coordinator, registrySeen, S.heartbeat("code-reviewer", "i-1"), marker);
    await expectPublishRefused(coordinator, registrySeen, S.deregisterType("code-reviewer"), marker);
    await expectPublishRefused(coordinator, registrySeen, S.query("lookup", "acme"), marker);
  });

  it("lets coordinators, operators and the registry's own MCP front ask every query op", async () => {
    // From the protocol's list, so an op added later without a permission fails here.
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    const operator = await connectAs("operator", "_INBOX_operator");
    for (const [name, client] of [["coordinator", coordinator], ["operator", operator], ["registry", registry]] as const) {
      for (const op of QUERY_OPS) {
        const reply = await client.nc.request(S.query(op), "{}", { timeout: 2_000 }).catch((e: unknown) => e);
        expect(reply instanceof Error ? `${name} ${op}: ${reply.message}` : (reply as { json(): unknown }).json()).toMatchObject({ ok: true });
      }
    }
  });

  it("lets only operators put named schemas: agents and coordinators are refused", async () => {
    const operator = await connectAs("operator", "_INBOX_operator");
    const reply = await operator.nc.request(S.schemaPut("Address"), "{}", { timeout: 2_000 });
    expect(reply.json()).toEqual({ ok: true, subject: "registry.schema.put.Address" });
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    await expectPublishRefused(agent, registrySeen, S.schemaPut("Address"), S.register("code-reviewer"));
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    await expectPublishRefused(coordinator, registrySeen, S.schemaPut("Address"), S.query("schemas"));
  });

  it("lets only operators approve, reject, deprecate and list pending specs (v1.2): agents, tenants' agents and coordinators are refused; the registry's web page may list them only", async () => {
    const operator = await connectAs("operator", "_INBOX_operator");
    const DECISIONS = [S.approve("acme-invoices"), S.reject("acme-invoices"), S.deprecate("acme-invoices"), S.undeprecate("acme-invoices")];
    for (const subject of [...DECISIONS, S.pending]) {
      const reply = await operator.nc.request(subject, "{}", { timeout: 2_000 });
      expect(reply.json()).toEqual({ ok: true, subject });
    }
    const acmeAgent = await connectAs("agent-acme-invoices", "_INBOX_acme-invoices");
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    const acme = await connectAs("coordinator-acme", "_INBOX_coordinator-acme");
    for (const subject of [...DECISIONS, S.pending]) {
      await expectPublishRefused(acmeAgent, registrySeen, subject, S.register("acme-invoices", "acme"));
      await expectPublishRefused(agent, registrySeen, subject, S.register("code-reviewer"));
      await expectPublishRefused(coordinator, registrySeen, subject, S.query("lookup"));
      await expectPublishRefused(acme, registrySeen, subject, S.query("lookup", "acme"));
    }
    // The registry's own web page reads the pending list (docs/ui.md) and may decide nothing.
    const listed = await registry.nc.request(S.pending, "{}", { timeout: 2_000 });
    expect(listed.json()).toEqual({ ok: true, subject: S.pending });
    for (const subject of DECISIONS) await expectPublishRefused(registry, registrySeen, subject, S.query("lookup"));
  });

  it("lets only operators set, read and delete a tenant's trust roots in the bucket (v1.2): agents, tenants' agents, coordinators and the registry's own user are refused", async () => {
    const ops = [S.trustSet("acme"), S.trustGet("acme"), S.trustDelete("acme")];
    const operator = await connectAs("operator", "_INBOX_operator");
    for (const subject of ops) {
      const reply = await operator.nc.request(subject, "{}", { timeout: 2_000 });
      expect(reply.json()).toEqual({ ok: true, subject });
    }
    const acmeAgent = await connectAs("agent-acme-invoices", "_INBOX_acme-invoices");
    const agent = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    const acme = await connectAs("coordinator-acme", "_INBOX_coordinator-acme");
    for (const subject of ops) {
      await expectPublishRefused(acmeAgent, registrySeen, subject, S.register("acme-invoices", "acme"));
      await expectPublishRefused(agent, registrySeen, subject, S.register("code-reviewer"));
      await expectPublishRefused(coordinator, registrySeen, subject, S.query("lookup"));
      await expectPublishRefused(acme, registrySeen, subject, S.query("lookup", "acme"));
      // The registry answers these ops; its own user may not send them (its web page sets nothing).
      await expectPublishRefused(registry, registrySeen, subject, S.query("lookup"));
    }
  });

  it("confines a tenant coordinator to its tenant's subjects", async () => {
    const acme = await connectAs("coordinator-acme", "_INBOX_coordinator-acme");
    const reply = await acme.nc.request(S.query("lookup", "acme"), "{}", { timeout: 2_000 });
    expect(reply.json()).toEqual({ ok: true, subject: "registry.tenant.acme.lookup" });
    const before = registrySeen.length;
    await expectRequestRefused(acme, S.query("lookup"));
    await expectRequestRefused(acme, S.query("lookup", "other"));
    // the permitted request after the refused ones is the marker
    await acme.nc.request(S.query("route", "acme"), "{}", { timeout: 2_000 });
    expect(registrySeen.slice(before)).toEqual(["registry.tenant.acme.route"]);
  });

  it("confines a tenant's agent to its tenant's write subjects for its own type (v1.2)", async () => {
    const agent = await connectAs("agent-acme-invoices", "_INBOX_acme-invoices");
    for (const subject of [S.register("acme-invoices", "acme"), S.heartbeat("acme-invoices", "i-1", "acme"), S.deregisterInstance("acme-invoices", "i-1", "acme")]) {
      const reply = await agent.nc.request(subject, "{}", { timeout: 2_000 });
      expect(reply.json()).toEqual({ ok: true, subject });
    }
    expect(agent.violations).toEqual([]);
    const marker = S.register("acme-invoices", "acme");
    for (const forbidden of [
      // the shared agents' subjects, where a body could name any tenant
      S.register("acme-invoices"), S.heartbeat("acme-invoices", "i-1"), S.deregisterInstance("acme-invoices", "i-1"),
      // another tenant's
      S.register("acme-invoices", "globex"), S.heartbeat("acme-invoices", "i-1", "globex"), S.deregisterInstance("acme-invoices", "i-1", "globex"),
      // another type, or every instance of its own (operators')
      S.register("acme-other", "acme"), S.heartbeat("acme-other", "i-1", "acme"), S.deregisterType("acme-invoices", "acme"),
    ]) {
      await expectPublishRefused(agent, registrySeen, forbidden, marker);
    }
  });

  it("keeps tenant coordinators and operators from registering or heartbeating as a tenant's agents", async () => {
    const coordinator = await connectAs("coordinator-acme", "_INBOX_coordinator-acme");
    for (const forbidden of [S.register("acme-invoices", "acme"), S.heartbeat("acme-invoices", "i-1", "acme"), S.deregisterInstance("acme-invoices", "i-1", "acme"), S.deregisterType("acme-invoices", "acme")]) {
      await expectPublishRefused(coordinator, registrySeen, forbidden, S.query("lookup", "acme"));
    }
    // it sends tasks to acme's agent
    const agent = await connectAs("agent-acme-invoices", "_INBOX_acme-invoices");
    agent.nc.subscribe("agent.tasks.acme-invoices", { callback: (_e, m) => void m.respond("done") });
    await agent.nc.flush();
    expect((await coordinator.nc.request("agent.tasks.acme-invoices", "task", { timeout: 2_000 })).string()).toBe("done");

    const operator = await connectAs("operator", "_INBOX_operator");
    for (const forbidden of [S.register("acme-invoices", "acme"), S.heartbeat("acme-invoices", "i-1", "acme")]) {
      await expectPublishRefused(operator, registrySeen, forbidden, S.query("lookup", "acme"));
    }
    // operators still deregister, in a tenant as in the shared fleet
    for (const subject of [S.deregisterType("acme-invoices", "acme"), S.deregisterInstance("acme-invoices", "i-1", "acme")]) {
      expect((await operator.nc.request(subject, "{}", { timeout: 2_000 })).json()).toEqual({ ok: true, subject });
    }
  });

  it("keeps one agent from reading another agent's replies", async () => {
    const reviewer = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const fixer = await connectAs("agent-bug-fixer", "_INBOX_bug-fixer");
    const stolen: Msg[] = [];
    const subs = ["_INBOX_code-reviewer.>", "_INBOX.>", ">"].map((subject) => {
      const sub = fixer.nc.subscribe(subject, { callback: (err, m) => void (err ? undefined : stolen.push(m)) });
      return { subject, sub };
    });
    for (const { subject, sub } of subs) {
      expect(await sub.closed, subject).toBeInstanceOf(PermissionViolationError);
    }
    await until("subscription violations", () => fixer.violations.length === 3);
    expect(fixer.violations.map((v) => `${v.operation} ${v.subject}`).sort()).toEqual(
      ["subscription >", "subscription _INBOX.>", "subscription _INBOX_code-reviewer.>"].sort(),
    );
    // the registry's reply still reaches the agent that asked, through allow_responses
    const reply = await reviewer.nc.request(S.register("code-reviewer"), "{}", { timeout: 2_000 });
    expect(reply.subject.startsWith("_INBOX_code-reviewer.")).toBe(true);
    await fixer.nc.flush();
    expect(stolen).toEqual([]);
  });

  it("lets a coordinator dispatch tasks that only the addressed agent can take and answer", async () => {
    const coordinator = await connectAs("coordinator", "_INBOX_coordinator");
    const reviewer = await connectAs("agent-code-reviewer", "_INBOX_code-reviewer");
    const fixer = await connectAs("agent-bug-fixer", "_INBOX_bug-fixer");
    reviewer.nc.subscribe("agent.tasks.code-reviewer", { queue: "code-reviewer", callback: (_e, m) => void m.respond("done") });
    const hijack = fixer.nc.subscribe("agent.tasks.code-reviewer");
    expect(violationOf(await hijack.closed)?.subject).toBe("agent.tasks.code-reviewer");
    await reviewer.nc.flush();
    const reply = await coordinator.nc.request("agent.tasks.code-reviewer", "review this", { timeout: 2_000 });
    expect(reply.string()).toBe("done");
    // allow_responses is for replies only: the agent cannot send tasks of its own
    await expectRequestRefused(reviewer, "agent.tasks.bug-fixer");
  });

  it("needs the private inbox prefix: the shared _INBOX is closed to agents", async () => {
    const agent = await connectAs("agent-bug-fixer");
    const err = await agent.nc.request(S.register("bug-fixer"), "{}", { timeout: 2_000 }).catch((e: unknown) => e);
    expect(violationOf(err)).toMatchObject({ operation: "subscription", subject: expect.stringMatching(/^_INBOX\./) });
  });

  it("gives the registry the KV and stream rights it needs, and operators read-only events", async () => {
    const kv = await new Kvm(registry.nc).create("agent-registry", { history: 1 });
    await kv.put("agents.code-reviewer", JSON.stringify({ agent_type: "code-reviewer" }));
    const jsm = await jetstreamManager(registry.nc);
    await jsm.streams.add({ name: "REGISTRY_EVENTS", subjects: [...S.storedEvents] });
    await jetstream(registry.nc).publish(S.event("registry.agent.registered", "code-reviewer"), JSON.stringify({ type: "registry.agent.registered" }));

    const operator = await connectAs("operator", "_INBOX_operator");
    const live: string[] = observe(operator.nc.subscribe("registry.agent.>"));
    await operator.nc.flush();
    const ojsm = await jetstreamManager(operator.nc);
    expect((await ojsm.streams.info("REGISTRY_EVENTS")).state.messages).toBe(1);
    const consumer = await jetstream(operator.nc).consumers.get("REGISTRY_EVENTS");
    const first = await consumer.next({ expires: 2_000 });
    expect(first?.subject).toBe("registry.agent.registered.code-reviewer");
    // operators query and deregister, and see live events
    expect((await operator.nc.request(S.query("get"), "{}", { timeout: 2_000 })).json()).toMatchObject({ ok: true });
    expect((await operator.nc.request(S.deregisterType("bug-fixer"), "{}", { timeout: 2_000 })).json()).toMatchObject({ ok: true });
    registry.nc.publish(S.event("registry.agent.heartbeat", "code-reviewer"), "{}");
    await until("live event", () => live.includes("registry.agent.heartbeat.code-reviewer"));

    // but cannot change history, read the bucket, or write it
    await expectRequestRefused(operator, "$JS.API.STREAM.DELETE.REGISTRY_EVENTS");
    await expectRequestRefused(operator, "$JS.API.STREAM.PURGE.REGISTRY_EVENTS");
    await expectRequestRefused(operator, "$JS.API.STREAM.INFO.KV_agent-registry");
    await expectRequestRefused(operator, "$JS.API.DIRECT.GET.KV_agent-registry.$KV.agent-registry.agents.code-reviewer");
    expect((await jsm.streams.info("REGISTRY_EVENTS")).state.messages).toBe(1);

    // an agent's KV client is refused too, and the value is unchanged
    const agent = await connectAs("agent-bug-fixer", "_INBOX_bug-fixer");
    const agentKv = await new Kvm(agent.nc).open("agent-registry");
    expect(violationOf(await agentKv.put("agents.code-reviewer", "{}").catch((e: unknown) => e))?.subject).toBe(
      "$KV.agent-registry.agents.code-reviewer",
    );
    expect(violationOf(await agentKv.get("agents.code-reviewer").catch((e: unknown) => e))?.operation).toBe("publish");
    expect((await kv.get("agents.code-reviewer"))?.json()).toEqual({ agent_type: "code-reviewer" });
  });

  it("runs the audit mirror as the audit user: it copies the stream, reports a gap and serves history; operators may ask", async () => {
    const jsm = await jetstreamManager(registry.nc);
    await jsm.streams.info("REGISTRY_EVENTS").catch(() => jsm.streams.add({ name: "REGISTRY_EVENTS", subjects: [...S.storedEvents] }));
    await jetstream(registry.nc).publish(S.event("registry.agent.registered", "code-reviewer"), JSON.stringify({ id: "sec-1", type: "registry.agent.registered", subject: "code-reviewer", data: { tenant_scope: null } }));
    // Messages that left the stream before any mirror ran: the mirror must be able to publish the gap alert.
    await jsm.streams.purge("REGISTRY_EVENTS");
    await jetstream(registry.nc).publish(S.event("registry.agent.registered", "code-reviewer"), JSON.stringify({ id: "sec-2", type: "registry.agent.registered", subject: "code-reviewer", data: { tenant_scope: null } }));
    const last = async () => (await jsm.streams.info("REGISTRY_EVENTS")).state.last_seq;
    const db = await withTestDatabase();
    const audit = await startAudit({
      natsUrl: server.url,
      databaseUrl: db.url,
      prefix: "registry",
      stream: "REGISTRY_EVENTS",
      nats: { user: "audit", pass: PASSWORDS.get("audit")!, inboxPrefix: "_INBOX_audit" },
    });
    try {
      await waitFor(async () => (await sql(db.url, "SELECT seq FROM audit_position"))[0]?.seq == (await last()) && (await sql(db.url, "SELECT 1 FROM audit_events WHERE type = 'registry.alert.audit_gap'")).length === 1, {
        timeoutMs: 15_000,
        message: "mirrored, gap alert included",
      });
      expect(audit.logs.filter((l) => l.level >= 40 && /permission/i.test(JSON.stringify(l)))).toEqual([]);
      // The fake registry of this file answers registry.> in the same queue group: ask until the mirror answers.
      const operator = await connectAs("operator", "_INBOX_operator");
      await waitFor(
        async () => {
          const reply = (await operator.nc.request(S.query("history"), JSON.stringify({ agent_type: "code-reviewer" }), { timeout: 2_000 })).json<{ events?: Array<{ id: string }> }>();
          return reply.events?.map((e) => e.id).join() === "sec-2";
        },
        { timeoutMs: 10_000, message: "operator gets the mirror's history" },
      );
      // and it can change neither the stream nor the bucket
      const auditUser = await connectAs("audit", "_INBOX_audit");
      await expectRequestRefused(auditUser, "$JS.API.STREAM.PURGE.REGISTRY_EVENTS");
      await expectRequestRefused(auditUser, "$JS.API.STREAM.DELETE.REGISTRY_EVENTS");
      await expectRequestRefused(auditUser, "$JS.API.STREAM.INFO.KV_agent-registry");
      await expectRequestRefused(auditUser, S.query("lookup"));
    } finally {
      await audit.stop();
      await db.drop();
    }
  });
});

describe.skipIf(!haveServer)("nats-server accepts the deploy configs", () => {
  const run = (file: string) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      execFile(findNatsServerBinary()!, ["-c", file, "-t"], (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
      );
    });

  it.each(["single.conf", "auth.conf", "cluster/nats-1.conf", "cluster/nats-2.conf", "cluster/nats-3.conf"])("%s", async (name) => {
    // Cluster configs ask for sync_interval, which servers before 2.10 refuse; on such a
    // server the rest of the file is still checked with that one line removed.
    const dir = mkdtempSync(join(tmpdir(), "deploy-nats-"));
    try {
      cpSync(fileURLToPath(new URL("../../deploy/nats", import.meta.url)), dir, { recursive: true });
      const file = join(dir, name);
      const version = (await natsServerVersion()) ?? "0.0.0";
      if (semver.lt(semver.coerce(version) ?? "0.0.0", "2.10.0")) {
        writeFileSync(file, readFileSync(file, "utf8").replace(/^\s*sync_interval:.*$/m, ""));
      }
      const { code, out } = await run(file);
      expect(out, out).toMatch(/is valid/);
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
