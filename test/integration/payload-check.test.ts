/**
 * The `check` op (PROTOCOL.md section 11.4) through NATS and the SDK: a payload checked against
 * a capability's input or output schema is an answer naming every problem's path and whose
 * schema applied; A2A messages are checked through their first data part; the provider is the
 * one asked for, else the one a lookup lists first (ready before registered); a tenant sees
 * only its view; a bad request is `invalid_request` and an unknown provider `not_found`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { AgentReplyError, AgentRequestError, connect, InvalidPayloadError, InvalidRequestError, NoRouteError, NotFoundError, RegistryClient } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry, registerSubject } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let nc: NatsConnection;
let sdk: RegistryClient;
let revision = 0;

const INVOICE = {
  type: "object",
  properties: {
    invoice_id: { type: "string", pattern: "^INV-[0-9]+$" },
    lines: { type: "array", items: { type: "object", required: ["amount"], properties: { amount: { type: "number", minimum: 0 } } } },
  },
  required: ["invoice_id"],
  additionalProperties: false,
};
const TOTAL = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };

const capability = (input: unknown, output: unknown = {}, confidence_hint?: number) => ({
  name: "invoice.total",
  description: "totals an invoice",
  input_schema: input,
  output_schema: output,
  ...(confidence_hint === undefined ? {} : { confidence_hint }),
});

async function register(agentType: string, overrides: Record<string, unknown>, status: "ready" | "registered" = "ready"): Promise<void> {
  const r = await raw.request(registerSubject(agentType, overrides), { spec: spec(agentType, overrides), status, heartbeat_interval_ms: 3_600_000 });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  revision = Math.max(revision, r.body.revision);
}

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  // The best by confidence is not ready: a check without agent_type takes the ready one.
  await register("pc-waiting", { capabilities: [capability({ type: "string" }, {}, 0.9)] }, "registered");
  await register("pc-totals", { capabilities: [capability(INVOICE, TOTAL, 0.5)] });
  await register("pc-acme", { tenant_scope: "acme", capabilities: [capability({ type: "object", required: ["acme_only"] }, {}, 1)] });
  nc = await connect({ servers: server.url });
  sdk = new RegistryClient(nc, { prefix: configOf(reg).prefix });
});

afterAll(async () => {
  await nc?.close();
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

describe("check: a payload against a capability's schema", () => {
  it("answers valid for a payload the schema accepts, naming whose schema applied", async () => {
    const reply = await sdk.check({ capability: "invoice.total", payload: { invoice_id: "INV-7", lines: [{ amount: 3 }] } }, { minRevision: revision });
    expect(reply).toMatchObject({ valid: true, errors: [], agent_type: "pc-totals", version: "1.0.0" });
    expect(reply.revision).toBeGreaterThanOrEqual(revision);
  });

  it("lists every problem with its path in the payload", async () => {
    const reply = await sdk.check({ capability: "invoice.total", payload: { invoice_id: "7", lines: [{ amount: -1 }, {}], extra: 1 } }, { minRevision: revision });
    expect(reply.valid).toBe(false);
    expect(reply.errors.map((e) => e.path).sort()).toEqual(["payload.extra", "payload.invoice_id", "payload.lines.0.amount", "payload.lines.1.amount"]);
    expect(reply.errors.every((e) => e.message.length > 0)).toBe(true);
  });

  it("checks a reply against the output schema with direction output", async () => {
    expect(await sdk.check({ capability: "invoice.total", direction: "output", payload: { total: 12.5 } })).toMatchObject({ valid: true });
    const bad = await sdk.check({ capability: "invoice.total", direction: "output", payload: { sum: 1 } });
    expect(bad).toMatchObject({ valid: false, errors: [{ path: "payload.total" }] });
  });

  it("checks an A2A message through its first data part, in both versions' forms", async () => {
    const v03 = { role: "user", parts: [{ kind: "text", text: "hi" }, { kind: "data", data: { invoice_id: "INV-1" } }] };
    expect(await sdk.check({ capability: "invoice.total", payload: v03 })).toMatchObject({ valid: true });
    const v10 = { role: "ROLE_USER", parts: [{ text: "hi" }, { data: { invoice_id: "nope" } }] };
    expect(await sdk.check({ capability: "invoice.total", payload: v10 })).toMatchObject({ valid: false, errors: [{ path: "payload.parts.1.data.invoice_id" }] });
    const noData = await sdk.check({ capability: "invoice.total", payload: { parts: [{ kind: "text", text: "only text" }] } });
    expect(noData).toMatchObject({ valid: false, errors: [{ path: "payload.parts" }] });
  });

  it("uses the schema of the agent type asked for, whatever its status", async () => {
    const reply = await sdk.check({ capability: "invoice.total", agent_type: "pc-waiting", payload: "a string" });
    expect(reply).toMatchObject({ valid: true, agent_type: "pc-waiting" });
    expect(await sdk.check({ capability: "invoice.total", agent_type: "pc-waiting", payload: { invoice_id: "INV-1" } })).toMatchObject({ valid: false });
  });

  it("is not_found for an unknown agent type, one without the capability, or a capability nobody provides", async () => {
    await expect(sdk.check({ capability: "invoice.total", agent_type: "pc-nobody", payload: {} })).rejects.toBeInstanceOf(NotFoundError);
    await register("pc-other", {});
    // Read your writes: pc-other is known to the view, so the answer is about its capability.
    await expect(sdk.check({ capability: "invoice.total", agent_type: "pc-other", payload: {} }, { minRevision: revision })).rejects.toThrow(/does not provide capability invoice\.total/);
    await expect(sdk.check({ capability: "nobody.does.this", payload: {} })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("refuses a request without a payload, or with a bad capability or direction, as invalid_request with the path", async () => {
    const missing = await raw.request("check", { capability: "invoice.total" });
    expect(missing.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "payload" }] });
    // null is a payload (and the schema refuses it): an answer, not a refusal.
    expect((await raw.request("check", { capability: "invoice.total", payload: null })).body).toMatchObject({ valid: false });
    const badName = await raw.request("check", { capability: "Not A Name", payload: {} });
    expect(badName.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "capability" }] });
    const badDirection = await raw.request("check", { capability: "invoice.total", direction: "sideways", payload: {} });
    expect(badDirection.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "direction" }] });
    await expect(sdk.check({ capability: "invoice.total", agent_type: "Not-A-Type!", payload: {} })).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it("sees a tenant's view: a tenant's agent for the tenant only", async () => {
    const acme = new RegistryClient(nc, { prefix: configOf(reg).prefix, tenant: "acme" });
    expect(await acme.check({ capability: "invoice.total", payload: {} })).toMatchObject({ agent_type: "pc-acme", valid: false, errors: [{ path: "payload.acme_only" }] });
    await expect(sdk.check({ capability: "invoice.total", agent_type: "pc-acme", payload: {} })).rejects.toBeInstanceOf(NotFoundError);
    expect((await sdk.check({ capability: "invoice.total", payload: {} })).agent_type).toBe("pc-totals");
  });

  it("keeps its answer within bounds for a payload with thousands of problems", async () => {
    const lines = Array.from({ length: 5_000 }, () => ({ amount: -1 }));
    const reply = await sdk.check({ capability: "invoice.total", payload: { invoice_id: "INV-1", lines } });
    expect(reply.valid).toBe(false);
    expect(reply.errors).toHaveLength(100);
  });
});

describe("RegistryClient.call: a task sent the checked way", () => {
  /** What pc-totals' one instance received, and how it answers (set per test). */
  const received: unknown[] = [];
  let answer: (payload: any) => { body: unknown; error?: string } = (p) => ({ body: { total: (p.lines ?? []).reduce((s: number, l: any) => s + l.amount, 0) } });

  beforeAll(async () => {
    const { headers } = await import("@nats-io/nats-core");
    nc.subscribe("agent.tasks.pc-totals", {
      callback: (_err, msg) => {
        const payload = msg.json();
        received.push(payload);
        const out = answer(payload);
        if (out.error === undefined) msg.respond(JSON.stringify(out.body));
        else {
          const h = headers();
          h.set("Nats-Service-Error-Code", "500");
          h.set("Nats-Service-Error", out.error);
          msg.respond("", { headers: h });
        }
      },
    });
    await nc.flush();
  });

  it("with minRevision, routes to an agent registered just before, on a view that holds it", async () => {
    nc.subscribe("agent.tasks.pc-fresh", { callback: (_err, msg) => void msg.respond(JSON.stringify({ echoed: true })) });
    await nc.flush();
    const fresh = { name: "fresh.echo", description: "echoes", input_schema: {}, output_schema: {} };
    const r = await raw.request(registerSubject("pc-fresh", {}), { spec: spec("pc-fresh", { capabilities: [fresh] }), heartbeat_interval_ms: 3_600_000 });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(await sdk.call("fresh.echo", {}, { minRevision: r.body.revision })).toEqual({ agent_type: "pc-fresh", nats_subject: "agent.tasks.pc-fresh", reply: { echoed: true } });
    expect(await sdk.call("fresh.echo", {}, { agentType: "pc-fresh", minRevision: r.body.revision })).toMatchObject({ agent_type: "pc-fresh" });
  });

  it("routes, sends the payload itself and returns the checked reply", async () => {
    received.length = 0;
    const result = await sdk.call("invoice.total", { invoice_id: "INV-9", lines: [{ amount: 2 }, { amount: 1.5 }] });
    expect(result).toEqual({ agent_type: "pc-totals", nats_subject: "agent.tasks.pc-totals", reply: { total: 3.5 } });
    expect(received).toEqual([{ invoice_id: "INV-9", lines: [{ amount: 2 }, { amount: 1.5 }] }]);
  });

  it("never sends a payload that breaks the input schema, and names every problem", async () => {
    received.length = 0;
    const err = await sdk.call("invoice.total", { invoice_id: 9, lines: [{}] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidPayloadError);
    expect(err).toMatchObject({ direction: "input", agentType: "pc-totals" });
    expect((err as InvalidPayloadError).issues.map((i) => i.path).sort()).toEqual(["payload.invoice_id", "payload.lines.0.amount"]);
    expect((err as Error).message).toMatch(/so it was not sent: payload\.\S+: .+ \(and 1 more\)$/);
    expect(received).toEqual([]);
  });

  it("refuses a reply that breaks the output schema, unless told not to check it", async () => {
    answer = () => ({ body: { sum: 1 } });
    const err = await sdk.call("invoice.total", { invoice_id: "INV-1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidPayloadError);
    expect(err).toMatchObject({ direction: "output", reply: { sum: 1 }, issues: [{ path: "payload.total" }] });
    expect(await sdk.call("invoice.total", { invoice_id: "INV-1" }, { checkReply: false })).toMatchObject({ reply: { sum: 1 } });
  });

  it("throws AgentReplyError for a NATS services error reply", async () => {
    answer = () => ({ body: null, error: "ledger offline" });
    await expect(sdk.call("invoice.total", { invoice_id: "INV-1" })).rejects.toThrow(new AgentReplyError("pc-totals answered with error 500: ledger offline", "pc-totals", "500"));
  });

  it("uses the named agent type's schema and subject, and refuses bad names before sending", async () => {
    // pc-waiting is not ready (route would not pick it) and nothing listens on its subject.
    await expect(sdk.call("invoice.total", { invoice_id: "INV-1" }, { agentType: "pc-waiting" })).rejects.toMatchObject({ direction: "input", agentType: "pc-waiting" });
    const unheard = await sdk.call("invoice.total", "text", { agentType: "pc-waiting", timeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(unheard).toBeInstanceOf(AgentRequestError);
    expect(unheard).toMatchObject({ reason: "unreachable", agentType: "pc-waiting", subject: "agent.tasks.pc-waiting" });
    await expect(sdk.call("Not A Capability", {})).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(sdk.call("nobody.does.this", {})).rejects.toBeInstanceOf(NoRouteError);
  });
});
