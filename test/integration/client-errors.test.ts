/**
 * The SDK against a fake registry on a real nats-server: every error reply of PROTOCOL.md
 * section 1 becomes its typed error class, and a missing registry is told apart from a slow one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headers, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import { Svcm } from "@nats-io/services";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/domain/errors.js";
import {
  ConflictError,
  InternalError,
  InvalidRequestError,
  InvalidSpecError,
  InvalidCardError,
  LimitExceededError,
  NoRouteError,
  NotFoundError,
  PayloadTooLargeError,
  RegistryClient,
  RegistryClientError,
  RegistryTimeoutError,
  RegistryUnreachableError,
  StaleViewError,
  UnavailableError,
  UnknownInstanceError,
  decodeReply,
} from "../../src/client/index.js";

const CLASSES: Record<ErrorCode, abstract new (...args: never[]) => RegistryClientError> = {
  invalid_request: InvalidRequestError,
  invalid_spec: InvalidSpecError,
  invalid_card: InvalidCardError,
  not_found: NotFoundError,
  unknown_instance: UnknownInstanceError,
  no_route: NoRouteError,
  conflict: ConflictError,
  payload_too_large: PayloadTooLargeError,
  limit_exceeded: LimitExceededError,
  unavailable: UnavailableError,
  stale_view: StaleViewError,
  internal: InternalError,
};

const enc = new TextEncoder();
const json = (v: unknown) => enc.encode(JSON.stringify(v));

let server: NatsServerHandle;
let nc: NatsConnection;
let responderNc: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer({ jetstream: false });
  nc = await connect({ servers: server.url });
  responderNc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.close();
  await responderNc?.close();
  await server?.stop();
});

/** A responder that answers every request on `subject` with `reply(msg)`. */
async function respond(subject: string, reply: (m: Msg) => void): Promise<{ stop: () => void; seen: unknown[] }> {
  const seen: unknown[] = [];
  const sub = responderNc.subscribe(subject, {
    callback: (_err, m) => {
      seen.push(m.data.length > 0 ? m.json() : undefined);
      reply(m);
    },
  });
  await responderNc.flush();
  return { stop: () => sub.unsubscribe(), seen };
}

describe("error replies become typed errors", () => {
  for (const [code, { status }] of Object.entries(ERROR_CATALOGUE) as [ErrorCode, { status: number }][]) {
    it(`${code} (${status}) -> ${CLASSES[code].name}`, async () => {
      const issues = code === "invalid_spec" ? [{ path: "capabilities.0.name", message: "dot-separated tokens" }] : undefined;
      const r = await respond(`registry.tenant.t-${code.replace(/_/g, "-")}.get`, (m) => {
        const h = headers();
        h.set("Nats-Service-Error-Code", String(status));
        h.set("Nats-Service-Error", `boom ${code}`);
        m.respond(json({ error: { code, message: `message of ${code}`, ...(issues ? { issues } : {}) } }), { headers: h });
      });
      const client = new RegistryClient(nc, { tenant: `t-${code.replace(/_/g, "-")}` });
      const err = await client.get("summarizer").catch((e: unknown) => e);
      r.stop();
      expect(err).toBeInstanceOf(CLASSES[code]);
      expect(err).toBeInstanceOf(RegistryClientError);
      const e = err as RegistryClientError;
      expect(e.code).toBe(code);
      expect(e.status).toBe(status);
      expect(e.message).toBe(`message of ${code}`);
      expect(e.issues).toEqual(issues ?? []);
    });
  }

  it("stale_view is a 503 with its own class", async () => {
    const r = await respond("registry.lookup", (m) => {
      const h = headers();
      h.set("Nats-Service-Error-Code", "503");
      h.set("Nats-Service-Error", "min_revision 42 not reached");
      m.respond(json({ error: { code: "stale_view", message: "min_revision 42 not reached" } }), { headers: h });
    });
    const err = await new RegistryClient(nc).lookup("text.summarize", { minRevision: 42 }).catch((e: unknown) => e);
    r.stop();
    expect(err).toBeInstanceOf(StaleViewError);
    expect((err as StaleViewError).status).toBe(503);
    expect(r.seen[0]).toEqual({ capability: "text.summarize", min_revision: 42 });
  });

  it("an error sent by @nats-io/services respondError (headers, no JSON body) maps by status", async () => {
    const srv = await new Svcm(responderNc).add({ name: "fake-registry", version: "0.0.1", queue: "agent-registry" });
    srv.addEndpoint("register", {
      subject: "fake.register.>",
      handler: (_err, m) => m.respondError(409, "nats_subject already used"),
    });
    await responderNc.flush();
    const err = await new RegistryClient(nc, { prefix: "fake" })
      .register({ spec: { agent_type: "summarizer" } as never })
      .catch((e: unknown) => e);
    await srv.stop();
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).message).toBe("nats_subject already used");
  });

  it("a body naming a code without the header still throws", () => {
    const data = json({ error: { code: "not_found", message: "unknown agent_type x" } });
    expect(() => decodeReply({ data, headers: undefined })).toThrow(NotFoundError);
  });

  it("an unknown status without a known code is an InternalError carrying that status", () => {
    const h = headers();
    h.set("Nats-Service-Error-Code", "418");
    h.set("Nats-Service-Error", "teapot");
    const err = (() => {
      try {
        decodeReply({ data: new Uint8Array(), headers: h });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(InternalError);
    expect((err as InternalError).status).toBe(418);
    expect((err as InternalError).message).toBe("teapot");
  });
});

describe("success and transport failures", () => {
  it("returns the parsed reply; an empty body is {}", async () => {
    const r = await respond("registry.discover", (m) => m.respond(json({ agents: [], revision: 7 })));
    await expect(new RegistryClient(nc).discover()).resolves.toEqual({ agents: [], revision: 7 });
    r.stop();
    expect(decodeReply({ data: new Uint8Array(), headers: undefined })).toEqual({});
  });

  it("no responders -> RegistryUnreachableError, at once", async () => {
    const started = Date.now();
    const err = await new RegistryClient(nc, { prefix: "nobody" }).lookup("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryUnreachableError);
    expect((err as RegistryUnreachableError).subject).toBe("nobody.lookup");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("a responder that never answers -> RegistryTimeoutError", async () => {
    const r = await respond("slow.search", () => undefined);
    const err = await new RegistryClient(nc, { prefix: "slow", timeoutMs: 200 }).search("x").catch((e: unknown) => e);
    r.stop();
    expect(err).toBeInstanceOf(RegistryTimeoutError);
    expect((err as RegistryTimeoutError).timeoutMs).toBe(200);
  });

  it("sends a query once more after a timeout (a replica may have died with it), never a write", async () => {
    let calls = 0;
    const r = await respond("flaky.lookup", (m) => {
      if (++calls > 1) m.respond(JSON.stringify({ capability: "x", providers: [], revision: 7 }));
    });
    const reply = await new RegistryClient(nc, { prefix: "flaky", timeoutMs: 200 }).lookup("x");
    expect(reply.revision).toBe(7);
    expect(r.seen).toHaveLength(2);
    r.stop();
    const w = await respond("flaky.heartbeat.a.i1", () => undefined);
    await expect(new RegistryClient(nc, { prefix: "flaky", timeoutMs: 200 }).heartbeat("a", "i1")).rejects.toBeInstanceOf(RegistryTimeoutError);
    expect(w.seen).toHaveLength(1);
    w.stop();
    const none = await respond("never.lookup", () => undefined);
    await expect(new RegistryClient(nc, { prefix: "never", timeoutMs: 100, queryRetries: 0 }).lookup("x")).rejects.toBeInstanceOf(RegistryTimeoutError);
    expect(none.seen).toHaveLength(1);
    none.stop();
  });

  it("refuses a subject token that would change the subject, without sending", async () => {
    const client = new RegistryClient(nc);
    await expect(client.heartbeat("a.b", "i1")).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(client.deregister("summarizer", "x.>")).rejects.toBeInstanceOf(InvalidRequestError);
    expect(() => new RegistryClient(nc, { tenant: "Bad Tenant" })).toThrow(InvalidRequestError);
  });

  it("listAll follows next_cursor across pages", async () => {
    const pages: Record<string, unknown> = {
      start: { agents: [{ agent_type: "a" }, { agent_type: "b" }], next_cursor: "c1", revision: 3 },
      c1: { agents: [{ agent_type: "c" }], next_cursor: null, revision: 3 },
    };
    const r = await respond("registry.tenant.acme.list", (m) => {
      const body = m.json<{ cursor?: string }>();
      m.respond(json(pages[body.cursor ?? "start"]));
    });
    const seen: string[] = [];
    for await (const a of new RegistryClient(nc, { tenant: "acme" }).listAll({ limit: 2 })) seen.push(a.agent_type);
    r.stop();
    expect(seen).toEqual(["a", "b", "c"]);
    // Each later page asks for at least the revision of the one before.
    expect(r.seen).toEqual([{ limit: 2 }, { limit: 2, cursor: "c1", min_revision: 3 }]);
  });
});
