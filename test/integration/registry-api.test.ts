/**
 * Every write and core query endpoint of PROTOCOL.md through a real NATS server, as a client
 * in any language would use them: raw subjects, JSON bodies, the error headers and envelope.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { maxPayloadBytes: 4096, duplicateCapabilities: "allow" });
  c = await RawClient.connect(server.url, (reg as unknown as { config: { prefix: string } }).config.prefix);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

function expectError(r: { ok: boolean; status: number; body: any; msg: any }, status: number, code: string): void {
  expect(r.ok).toBe(false);
  expect(r.status).toBe(status);
  expect(r.body.error.code).toBe(code);
  expect(typeof r.body.error.message).toBe("string");
  expect(r.msg.headers.get("Nats-Service-Error")).toBe(r.body.error.message.replace(/[\r\n]+/g, " "));
  expect(r.msg.headers.get("Registry-Correlation-Id")).toMatch(/^[0-9a-f]{12}$/);
}

describe("register", () => {
  it("registers, generates an instance id, returns the heartbeat contract and revision", async () => {
    const r = await c.request("register.reg-a", { spec: spec("reg-a"), heartbeat_interval_ms: 2000, metadata: { zone: "a" } });
    expect(r.ok).toBe(true);
    expect(r.body).toMatchObject({ agent_type: "reg-a", version: "1.0.0", status: "ready", heartbeat_interval_ms: 2000, evict_after_ms: 6000, warnings: [] });
    expect(r.body.instance_id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(r.body.heartbeat_subject).toBe(`${c.prefix}.heartbeat.reg-a.${r.body.instance_id}`);
    const got = await c.request("get", { agent_type: "reg-a", min_revision: r.body.revision });
    expect(got.body.agent).toMatchObject({ agent_type: "reg-a", status: "ready", owner_team: "team-a", max_concurrent_tasks: 10 });
    expect(got.body.agent.instances).toHaveLength(1);
    expect(got.body.agent.instances[0]).toMatchObject({ instance_id: r.body.instance_id, metadata: { zone: "a" }, heartbeat_interval_ms: 2000 });
    expect(got.body.revision).toBeGreaterThanOrEqual(r.body.revision);
  });

  it("is idempotent for the same instance id and keeps registered_at", async () => {
    const first = await c.request("register.reg-b", { spec: spec("reg-b"), instance_id: "i-1" });
    const second = await c.request("register.reg-b", { spec: spec("reg-b"), instance_id: "i-1" });
    expect(second.body.instance_id).toBe("i-1");
    expect(second.body.revision).toBeGreaterThan(first.body.revision);
    const got = await c.request("get", { agent_type: "reg-b", min_revision: second.body.revision });
    expect(got.body.agent.instances).toHaveLength(1);
  });

  it("bounds the heartbeat interval and warns about unknown fields", async () => {
    const r = await c.request("register.reg-c", { spec: { ...spec("reg-c"), colour: "blue" }, heartbeat_interval_ms: 5 });
    expect(r.body.heartbeat_interval_ms).toBe(100);
    expect(r.body.warnings.join("\n")).toMatch(/spec\.colour/);
    expect(r.body.warnings.join("\n")).toMatch(/heartbeat_interval_ms 5/);
  });

  it("keeps the newer spec while its instance is live during a rollback", async () => {
    const v2 = await c.request("register.reg-d", { spec: spec("reg-d", { version: "2.0.0" }), instance_id: "new" });
    const v1 = await c.request("register.reg-d", { spec: spec("reg-d", { version: "1.0.0", description: "old" }), instance_id: "old" });
    expect(v1.ok).toBe(true);
    expect(v1.body.warnings.join(" ")).toMatch(/not stored/);
    const got = await c.request("get", { agent_type: "reg-d", min_revision: Math.max(v1.body.revision, v2.body.revision) });
    expect(got.body.agent.version).toBe("2.0.0");
    expect(got.body.agent.instances.map((i: any) => i.version).sort()).toEqual(["1.0.0", "2.0.0"]);
  });

  it("refuses an invalid spec with every issue's path, and stores nothing", async () => {
    const bad = spec("reg-e", { version: "one", capabilities: [{ name: "Bad Name", description: "x", input_schema: {}, output_schema: {} }] });
    const r = await c.request("register.reg-e", { spec: bad });
    expectError(r, 400, "invalid_spec");
    const paths = r.body.error.issues.map((i: any) => i.path);
    expect(paths).toContain("version");
    expect(paths).toContain("capabilities.0.name");
    expectError(await c.request("get", { agent_type: "reg-e" }), 404, "not_found");
  });

  it("refuses schemas that do not compile or reach remote refs", async () => {
    const remote = spec("reg-f", { capabilities: [{ name: "x.y", description: "x", input_schema: { $ref: "https://example.com/s.json" }, output_schema: {} }] });
    const r = await c.request("register.reg-f", { spec: remote });
    expectError(r, 400, "invalid_spec");
    expect(r.body.error.issues[0].path).toBe("capabilities.0.input_schema");
  });

  it("refuses a body naming another agent type than the subject", async () => {
    const r = await c.request("register.reg-g", { spec: spec("someone-else") });
    expectError(r, 400, "invalid_request");
    expect(r.body.error.issues[0].path).toBe("spec.agent_type");
  });

  it("refuses bad subject tokens, non-JSON, wrong shapes, forbidden keys and oversize bodies", async () => {
    expectError(await c.request("register.Bad_Type", { spec: spec("Bad_Type") }), 400, "invalid_request");
    expectError(await c.request("register.reg-h", "{not json"), 400, "invalid_request");
    expectError(await c.request("register.reg-h", "[1,2]"), 400, "invalid_request");
    expectError(await c.request("register.reg-h", { spec: spec("reg-h"), heartbeat_interval_ms: "soon" }), 400, "invalid_request");
    expectError(await c.request("register.reg-h", '{"spec":{"__proto__":{"x":1}}}'), 400, "invalid_request");
    expectError(await c.request("register.reg-h", "[".repeat(100) + "]".repeat(100)), 400, "invalid_request");
    expectError(await c.request("register.reg-h", { spec: spec("reg-h", { description: "x".repeat(5000) }) }), 413, "payload_too_large");
    expectError(await c.request("get", { agent_type: "reg-h" }), 404, "not_found");
  });

  it("updated_at (v1.2) moves when the spec changes, not when an instance registers the same spec", async () => {
    const first = await c.request("register.reg-u", { spec: spec("reg-u"), instance_id: "a" });
    const created = (await c.request("get", { agent_type: "reg-u", min_revision: first.body.revision })).body.agent;
    expect(created.updated_at).toBe(created.registered_at);
    const same = await c.request("register.reg-u", { spec: spec("reg-u"), instance_id: "b" });
    expect((await c.request("get", { agent_type: "reg-u", min_revision: same.body.revision })).body.agent.updated_at).toBe(created.updated_at);
    const before = Date.now();
    const newer = await c.request("register.reg-u", { spec: spec("reg-u", { version: "1.1.0" }), instance_id: "c" });
    const changed = (await c.request("get", { agent_type: "reg-u", min_revision: newer.body.revision })).body.agent;
    expect(changed.registered_at).toBe(created.registered_at);
    // The registry's clock is this machine's: the change is stamped no earlier than it was sent.
    expect(Date.parse(changed.updated_at)).toBeGreaterThanOrEqual(before);
  });

  it("refuses a nats_subject that another live agent type uses", async () => {
    await c.request("register.reg-i", { spec: spec("reg-i", { nats_subject: "shared.subject" }) });
    const r = await c.request("register.reg-j", { spec: spec("reg-j", { nats_subject: "shared.subject" }) });
    expectError(r, 409, "conflict");
    expect(r.body.error.message).toMatch(/reg-i/);
  });
});

describe("heartbeat and deregister", () => {
  it("heartbeats update status and active tasks; unknown instances must register again", async () => {
    const r = await c.request("register.hb-a", { spec: spec("hb-a"), instance_id: "one", status: "registered" });
    const hb = await c.request("heartbeat.hb-a.one", { status: "ready", active_tasks: 3 });
    expect(hb.ok).toBe(true);
    expect(hb.body.status).toBe("ready");
    expect(hb.body.revision).toBeGreaterThan(r.body.revision);
    const got = await c.request("get", { agent_type: "hb-a", min_revision: hb.body.revision });
    expect(got.body.agent.instances[0]).toMatchObject({ status: "ready", active_tasks: 3 });
    expectError(await c.request("heartbeat.hb-a.nobody", {}), 404, "unknown_instance");
    expectError(await c.request("heartbeat.hb-a.bad_token!", {}), 400, "invalid_request");
  });

  it("accepts an empty heartbeat body and a plain publish with no reply", async () => {
    const r = await c.request("register.hb-b", { spec: spec("hb-b"), instance_id: "one" });
    const empty = await c.request("heartbeat.hb-b.one", "");
    expect(empty.ok).toBe(true);
    c.nc.publish(`${c.prefix}.heartbeat.hb-b.one`, JSON.stringify({ active_tasks: 7 }));
    await waitFor(() => reg.view.get("hb-b")?.instances.get("one")?.active_tasks === 7, { message: "published heartbeat applied" });
    expect(reg.view.revision).toBeGreaterThan(r.body.revision);
  });

  it("deregisters an instance, then the type is deregistered but kept for get", async () => {
    await c.request("register.dr-a", { spec: spec("dr-a"), instance_id: "x" });
    await c.request("register.dr-a", { spec: spec("dr-a"), instance_id: "y" });
    const first = await c.request("deregister.dr-a.x", { reason: "shutting down" });
    expect(first.body).toMatchObject({ agent_type: "dr-a", instance_id: "x", agent_removed: false });
    const last = await c.request("deregister.dr-a.y", {});
    expect(last.body).toMatchObject({ agent_removed: true });
    expectError(await c.request("deregister.dr-a.y", {}), 404, "unknown_instance");
    const got = await c.request("get", { agent_type: "dr-a", min_revision: last.body.revision });
    expect(got.body.agent.status).toBe("deregistered");
    expect(got.body.agent.deregistered_at).not.toBeNull();
    const lookup = await c.request("lookup", { capability: "dr-a.run" });
    expect(lookup.body.providers).toEqual([]);
    const listed = await c.request("list", { status: ["deregistered"] });
    expect(listed.body.agents.map((a: any) => a.agent_type)).toContain("dr-a");
  });

  it("deregisters a whole type (operator action)", async () => {
    await c.request("register.dr-b", { spec: spec("dr-b"), instance_id: "x" });
    await c.request("register.dr-b", { spec: spec("dr-b"), instance_id: "y" });
    // At once: the deregistration reads the store's latest, so y, registered just now, goes too.
    const r = await c.request("deregister.dr-b", { reason: "retired" });
    expect(r.body).toMatchObject({ agent_type: "dr-b", agent_removed: true });
    expect(r.body.instances.sort()).toEqual(["x", "y"]);
    expectError(await c.request("deregister.no-such-type", {}), 404, "not_found");
  });
});

describe("queries", () => {
  it("lookup orders by confidence, then weight, then registration order; filters status and version", async () => {
    const cap = (hint?: number) => [{ name: "q.summarize", description: "summarize", input_schema: {}, output_schema: {}, ...(hint === undefined ? {} : { confidence_hint: hint }) }];
    await c.request("register.q-low", { spec: spec("q-low", { capabilities: cap(0.2) }) });
    await c.request("register.q-heavy", { spec: spec("q-heavy", { capabilities: cap(0.2), weight: 3 }) });
    await c.request("register.q-high", { spec: spec("q-high", { capabilities: cap(0.9), version: "2.1.0" }) });
    const r = await c.request("register.q-none", { spec: spec("q-none", { capabilities: cap() }), status: "registered" });
    const all = await c.request("lookup", { capability: "q.summarize", min_revision: r.body.revision });
    expect(all.body.providers.map((p: any) => p.agent_type)).toEqual(["q-high", "q-heavy", "q-low"]);
    expect(all.body.providers[0]).toMatchObject({ nats_subject: "agent.tasks.q-high", consumer_group: "q-high", confidence_hint: 0.9, ready_instances: 1, status: "ready" });
    const withRegistered = await c.request("lookup", { capability: "q.summarize", status: ["ready", "registered"] });
    expect(withRegistered.body.providers.map((p: any) => p.agent_type)).toContain("q-none");
    const v2 = await c.request("lookup", { capability: "q.summarize", version: "^2" });
    expect(v2.body.providers.map((p: any) => p.agent_type)).toEqual(["q-high"]);
    expectError(await c.request("lookup", { capability: "q.summarize", version: "not a range" }), 400, "invalid_request");
    expect((await c.request("lookup", { capability: "nobody.has.this" })).body.providers).toEqual([]);
  });

  it("capabilities projection lists ready capabilities with providers and schemas", async () => {
    const r = await c.request("capabilities", {});
    const summarize = r.body.capabilities.find((x: any) => x.name === "q.summarize");
    expect(summarize).toMatchObject({ description: "summarize", providers: ["q-high", "q-heavy", "q-low"], input_schema: {}, output_schema: {} });
    expect(r.body.capabilities.find((x: any) => x.name === "dr-a.run")).toBeUndefined();
    expect(typeof r.body.revision).toBe("number");
  });

  it("list pages with a stable cursor and filters", async () => {
    let last = 0;
    for (const t of ["ls-a", "ls-b", "ls-c"]) {
      last = (await c.request(`register.${t}`, { spec: spec(t, { owner_team: "listers", tags: { tier: t === "ls-b" ? "gold" : "std" } }) })).body.revision;
    }
    // Read our own writes: the revision of the last registration, not what the view holds now.
    const r1 = await c.request("list", { owner_team: "listers", limit: 2, min_revision: last });
    expect(r1.body.agents.map((a: any) => a.agent_type)).toEqual(["ls-a", "ls-b"]);
    expect(typeof r1.body.next_cursor).toBe("string");
    const r2 = await c.request("list", { owner_team: "listers", limit: 2, cursor: r1.body.next_cursor });
    expect(r2.body.agents.map((a: any) => a.agent_type)).toEqual(["ls-c"]);
    expect(r2.body.next_cursor).toBeNull();
    const gold = await c.request("list", { tags: { tier: "gold" } });
    expect(gold.body.agents.map((a: any) => a.agent_type)).toEqual(["ls-b"]);
    expectError(await c.request("list", { cursor: "!!!" }), 400, "invalid_request");
    expectError(await c.request("list", { limit: 5000 }), 400, "invalid_request");
  });

  it("min_revision waits for the view, or answers stale_view", async () => {
    const r = await c.request("register.mr-a", { spec: spec("mr-a") });
    const ok = await c.request("get", { agent_type: "mr-a", min_revision: r.body.revision });
    expect(ok.body.revision).toBeGreaterThanOrEqual(r.body.revision);
    const stale = await c.request("get", { agent_type: "mr-a", min_revision: r.body.revision + 1_000_000 });
    expectError(stale, 503, "stale_view");
  });

  it("is one NATS micro service that $SRV discovery finds", async () => {
    const info = await c.nc.request("$SRV.INFO.agent-registry", "", { timeout: 2000 });
    const body = JSON.parse(new TextDecoder().decode(info.data));
    expect(body.name).toBe("agent-registry");
    expect(body.endpoints.map((e: any) => e.subject)).toContain(`${c.prefix}.register.*`);
  });
});
