/**
 * The ops server's /ui (docs/ui.md): the page's files with their headers, the token, the JSON
 * API answered by the registry's own queries, the history request degrading when no audit
 * mirror runs, and /ui/events as server-sent events resumable from a stream sequence.
 */
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import { buildWebPage } from "../harness/browser.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { openSse, type SseStream } from "../harness/sse.js";
import { waitFor } from "../harness/wait.js";

const TOKEN = "ui-test-token-1";
const auth = { Authorization: `Bearer ${TOKEN}` };
let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let client: RegistryClient;
let base: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  buildWebPage();
  server = await withNatsServer();
  reg = await startRegistry(server.url, { uiToken: TOKEN, uiMaxClients: 3 });
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  client = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

/** A reply's JSON, loosely typed as any client in any language reads it. */
const body = (res: Response): Promise<any> => res.json();

async function sse(path: string, headers: Record<string, string> = auth): Promise<SseStream> {
  const s = await openSse(`${base}${path}`, headers);
  streams.push(s);
  return s;
}

describe("the page's files", () => {
  it("serves the page with its content type, a CSP without inline scripts, and an ETag", async () => {
    const res = await fetch(`${base}/ui/`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    const html = await res.text();
    expect(html).toContain('<script type="module" src="app.js"></script>');
    const again = await fetch(`${base}/ui/`, { headers: { ...auth, "If-None-Match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);

    const js = await fetch(`${base}/ui/app.js`, { headers: auth });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toContain("max-age=");
    expect((await fetch(`${base}/ui/style.css`, { headers: auth })).headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect((await fetch(`${base}/ui/nothing.js`, { headers: auth })).status).toBe(404);
    const redirect = await fetch(`${base}/ui`, { headers: auth, redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([303, "/ui/"]);
  });

  it("is read-only", async () => {
    const res = await fetch(`${base}/ui/api/agents`, { method: "POST", headers: auth, body: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
  });
});

describe("the token", () => {
  it("is required on the page, the API and the events, from a header, basic auth, a cookie or ?token=", async () => {
    for (const path of ["/ui/", "/ui/app.js", "/ui/api/info", "/ui/events"]) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(401);
      expect((await fetch(`${base}${path}`, { headers: { Authorization: "Bearer wrong" } })).status, path).toBe(401);
    }
    const opened = await fetch(`${base}/ui/?token=${TOKEN}`, { redirect: "manual" });
    expect(opened.status).toBe(303);
    expect(opened.headers.get("location")).toBe("/ui/");
    const cookie = opened.headers.get("set-cookie") ?? "";
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    const withCookie = await fetch(`${base}/ui/api/info`, { headers: { Cookie: cookie.split(";")[0]! } });
    expect(withCookie.status).toBe(200);
    expect((await fetch(`${base}/ui/api/info?token=${TOKEN}`)).status).toBe(200);
    // Basic auth, the token as the password: what a browser sends once it asked the operator.
    const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` });
    const challenge = await fetch(`${base}/ui/`, { headers: { Accept: "text/html" } });
    expect(challenge.headers.get("www-authenticate")).toContain("Basic");
    expect((await fetch(`${base}/ui/`, { headers: basic("operator", TOKEN) })).status).toBe(200);
    expect((await fetch(`${base}/ui/events?recent=0`, { headers: basic("", TOKEN), signal: AbortSignal.timeout(5000) }).then(async (r) => (await r.body?.cancel(), r.status)))).toBe(200);
    expect((await fetch(`${base}/ui/api/info`, { headers: basic("operator", "wrong") })).status).toBe(401);
    // The token is never part of what the page is told, nor of the registry's logs.
    expect(JSON.stringify(await body(withCookie))).not.toContain(TOKEN);
    expect(JSON.stringify(reg.logs)).not.toContain(TOKEN);
  });
});

describe("the JSON API", () => {
  it("answers with the registry's own list, search and get", async () => {
    for (const t of ["ui-alpha", "ui-beta", "ui-gamma"]) {
      await client.register({ spec: spec(t, { description: `${t} translates invoices` }) as any, instance_id: "i1", status: "ready" });
    }
    const { revision } = await client.register({ spec: spec("ui-alpha", { description: "ui-alpha translates invoices" }) as any, instance_id: "i2", status: "registered" });
    // Both read the replica's view once it holds the writes above (the page passes min_revision the same way).
    const listed = await client.list({ limit: 100 }, { minRevision: revision });
    const page = await body(await fetch(`${base}/ui/api/agents?min_revision=${revision}`, { headers: auth }));
    expect(page.agents.map((a: any) => a.agent_type)).toEqual(listed.agents.map((a) => a.agent_type));
    const alpha = page.agents.find((a: any) => a.agent_type === "ui-alpha");
    expect(alpha).toMatchObject({ status: "ready", kind: "agent", version: "1.0.0", ready: 1, instances: 2, owner_team: "team-a", tenant_scope: null });
    expect(alpha.last_heartbeat).toEqual(expect.any(String));

    const two = await body(await fetch(`${base}/ui/api/agents?limit=2`, { headers: auth }));
    expect(two.agents).toHaveLength(2);
    const rest = await body(await fetch(`${base}/ui/api/agents?limit=2&cursor=${encodeURIComponent(two.next_cursor)}`, { headers: auth }));
    expect(rest.agents[0].agent_type).toBe("ui-gamma");

    const found = await body(await fetch(`${base}/ui/api/search?q=invoices`, { headers: auth }));
    expect(found.agents.map((a: any) => a.agent_type).sort()).toEqual(["ui-alpha", "ui-beta", "ui-gamma"]);

    const one = await body(await fetch(`${base}/ui/api/agents/ui-alpha`, { headers: auth }));
    expect(one.agent.instances.map((i: any) => i.instance_id)).toEqual(["i1", "i2"]);
    expect(one.agent.capabilities[0].name).toBe("ui-alpha.run");
    const info = await body(await fetch(`${base}/ui/api/info`, { headers: auth }));
    expect(info.missed_heartbeats).toBe(configOf(reg).missedHeartbeats);
  });

  it("refuses bad input with a structured error and keeps the registry's status", async () => {
    const bad = await fetch(`${base}/ui/api/agents?status=sleeping`, { headers: auth });
    expect(bad.status).toBe(400);
    expect((await body(bad)).error.code).toBe("invalid_request");
    expect((await fetch(`${base}/ui/api/agents?limit=100000`, { headers: auth })).status).toBe(400);
    const missing = await fetch(`${base}/ui/api/agents/no-such-agent`, { headers: auth });
    expect(missing.status).toBe(404);
    expect((await body(missing)).error.code).toBe("not_found");
    expect((await fetch(`${base}/ui/api/agents/NOT%20A%20TYPE`, { headers: auth })).status).toBe(400);
  });

  it("answers an agent's neighbours in the dependency graph with the registry's graph query", async () => {
    await client.register({ spec: spec("ui-lib") as any, instance_id: "l1", status: "ready" });
    const { revision } = await client.register({ spec: spec("ui-app", { depends: [{ type: "agent", name: "ui-lib", version: "1.0.0" }] }) as any, instance_id: "a1", status: "ready" });
    const app = await body(await fetch(`${base}/ui/api/agents/ui-app/graph?min_revision=${revision}`, { headers: auth }));
    expect(app.dependencies).toEqual([expect.objectContaining({ name: "ui-lib", version: "1.0.0", state: "live" })]);
    expect(app.dependents).toEqual([]);
    const lib = await body(await fetch(`${base}/ui/api/agents/ui-lib/graph`, { headers: auth }));
    expect(lib.dependents.map((n: any) => n.name)).toEqual(["ui-app"]);
  });

  it("draws from /ui/api/graph: both ways around an agent, the whole fleet, a tenant's view, and refuses bad input", async () => {
    await client.register({ spec: spec("ui-base") as any, instance_id: "b1", status: "ready" });
    await client.register({ spec: spec("ui-mid", { depends: [{ type: "agent", name: "ui-base", version: "1.0.0" }] }) as any, instance_id: "m1", status: "ready" });
    const { revision } = await client.register({ spec: spec("ui-top", { depends: [{ type: "agent", name: "ui-mid", version: "1.0.0" }, { type: "agent", name: "ui-none", version: "1.0.0" }] }) as any, instance_id: "t1", status: "ready" });
    const around = await body(await fetch(`${base}/ui/api/graph?agent=ui-mid&depth=1&min_revision=${revision}`, { headers: auth }));
    expect(around.root).toBe("ui-mid");
    expect(around.nodes.map((n: any) => n.name).sort()).toEqual(["ui-base", "ui-mid", "ui-top"]);
    expect(around.edges).toEqual(expect.arrayContaining([{ from: "agent:ui-top@1.0.0", to: "agent:ui-mid@1.0.0", capability: null }, { from: "agent:ui-mid@1.0.0", to: "agent:ui-base@1.0.0", capability: null }]));
    const deeper = await body(await fetch(`${base}/ui/api/graph?agent=ui-mid`, { headers: auth }));
    expect(deeper.nodes.length).toBe(3); // two steps: ui-top's own dependencies are not ui-mid's neighbourhood
    const fleet = await body(await fetch(`${base}/ui/api/graph`, { headers: auth }));
    expect(fleet.root).toBeNull();
    expect(fleet.nodes.find((n: any) => n.name === "ui-none")?.state).toBe("missing");
    const tenant = await body(await fetch(`${base}/ui/api/graph?tenant=acme`, { headers: auth }));
    expect(tenant.tenant).toBe("acme");
    for (const q of ["depth=0", "depth=17", "depth=x", "agent=NOT%20A%20TYPE", "tenant=Bad!"]) {
      const res = await fetch(`${base}/ui/api/graph?${q}`, { headers: auth });
      expect(res.status, q).toBe(400);
      expect((await body(res)).error.code, q).toBe("invalid_request");
    }
  });

  it("sums the fleet up at /ui/api/summary and says whether an audit mirror answers at /ui/api/mirror", async () => {
    const s = await body(await fetch(`${base}/ui/api/summary`, { headers: auth }));
    expect(s.instances.total).toBeGreaterThan(0);
    expect(s.instances).toMatchObject({ late: 0, critical: 0 });
    expect(s.self_preservation).toEqual({ active: false, since: "", overdue: 0, live: 0 });
    expect(s.evictor).toBe(reg.replicaName);
    expect(s.replicas).toHaveLength(1);
    expect(s.nats_server).toBe(nc.info?.version);
    expect(s.missed_heartbeats).toBe(configOf(reg).missedHeartbeats);
    expect(await body(await fetch(`${base}/ui/api/mirror`, { headers: auth }))).toEqual({ available: false, reason: "no audit mirror running" });
    expect((await fetch(`${base}/ui/api/summary`)).status).toBe(401); // behind the token like the rest
  });

  it("says when no audit mirror runs, and relays a mirror's history when one does", async () => {
    const none = await body(await fetch(`${base}/ui/api/agents/ui-alpha/history`, { headers: auth }));
    expect(none).toEqual({ available: false, reason: "no audit mirror running" });
    const asked: any[] = [];
    const mirror = nc.subscribe(`${configOf(reg).prefix}.history`, {
      callback: (_e, m) => {
        asked.push(m.json());
        m.respond(JSON.stringify({ events: [{ type: "registry.agent.registered", subject: "ui-alpha", seq: 7, data: {} }], next_cursor: null }));
      },
    });
    await nc.flush();
    try {
      const got = await body(await fetch(`${base}/ui/api/agents/ui-alpha/history`, { headers: auth }));
      expect(got.available).toBe(true);
      expect(got.events[0].seq).toBe(7);
      expect(asked[0]).toMatchObject({ agent_type: "ui-alpha" });
    } finally {
      mirror.unsubscribe();
    }
  });
});

describe("/ui/events", () => {
  it("streams stored events with the stream sequence as id, and resumes after Last-Event-ID", async () => {
    const live = await sse("/ui/events?agent=ui-delta");
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    await client.register({ spec: spec("ui-delta") as any, instance_id: "d1", status: "ready" });
    await client.deregister("ui-delta", "d1");
    await waitFor(() => live.events.some((e) => e.event === "registry.agent.deregistered"), { message: "the deregistration streamed" });
    const [registered, deregistered] = live.events;
    expect(registered!.event).toBe("registry.agent.registered");
    expect(registered!.data).toMatchObject({ specversion: "1.0", type: "registry.agent.registered", subject: "ui-delta" });
    expect(Number(deregistered!.id)).toBeGreaterThan(Number(registered!.id));
    live.close();

    const resumed = await sse("/ui/events?agent=ui-delta", { ...auth, "Last-Event-ID": registered!.id! });
    await waitFor(() => resumed.events.length > 0, { message: "the resumed stream delivered" });
    expect(resumed.events[0]!.id).toBe(deregistered!.id);
    resumed.close();
  });

  it("adds heartbeats (without an id) only when asked", async () => {
    await client.register({ spec: spec("ui-epsilon") as any, instance_id: "e1", status: "ready" });
    const plain = await sse("/ui/events?agent=ui-epsilon");
    const withBeats = await sse("/ui/events?agent=ui-epsilon&heartbeats=1");
    await waitFor(async () => {
      await client.heartbeat("ui-epsilon", "e1", { active_tasks: 1 });
      return withBeats.events.some((e) => e.event === "registry.agent.heartbeat");
    }, { message: "a heartbeat streamed" });
    const beat = withBeats.events.find((e) => e.event === "registry.agent.heartbeat")!;
    expect(beat.id).toBeNull();
    expect(beat.data.data).toMatchObject({ instance_id: "e1", active_tasks: 1 });
    await client.deregister("ui-epsilon", "e1");
    await waitFor(() => plain.events.some((e) => e.event === "registry.agent.deregistered"), { message: "the plain stream got the deregistration" });
    expect(plain.events.map((e) => e.event)).not.toContain("registry.agent.heartbeat");
    plain.close();
    withBeats.close();
  });

  it("replays the last events with ?recent=, refuses bad parameters, and bounds the open streams", async () => {
    const recent = await sse("/ui/events?recent=3");
    await waitFor(() => recent.events.length === 3, { message: "three recent events replayed" });
    expect((await fetch(`${base}/ui/events?recent=99999`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${base}/ui/events?types=agent.heartbeat`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${base}/ui/events?agent=BAD%20TYPE`, { headers: auth })).status).toBe(400);
    const head = await fetch(`${base}/ui/events`, { method: "HEAD", headers: auth });
    expect([head.status, head.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    const more = [await sse("/ui/events"), await sse("/ui/events")];
    const refused = await fetch(`${base}/ui/events`, { headers: auth });
    expect(refused.status).toBe(503);
    expect((await body(refused)).error.message).toContain("REGISTRY_UI_MAX_CLIENTS");
    for (const s of [recent, ...more]) s.close();
    await waitFor(async () => {
      const res = await fetch(`${base}/ui/events`, { headers: auth, signal: AbortSignal.timeout(2000) }).catch(() => null);
      await res?.body?.cancel().catch(() => undefined);
      return res?.status === 200;
    }, { message: "closed streams free their places" });
  });
});

describe("/ui/events when the events stream cannot be read", () => {
  it("answers 503 with a structured error, and no log line shows the token the request carried", async () => {
    const broken = await startRegistry(server.url, { uiToken: TOKEN });
    try {
      await (await jetstreamManager(nc)).streams.delete(configOf(broken).eventsStream);
      const at = `http://127.0.0.1:${broken.httpPort}`;
      // ?recent= (the Events view's first request) reads the stream's state before its consumer is made.
      for (const query of ["recent=200", "since=15m", "agent=ui-alpha&heartbeats=1"]) {
        const res = await fetch(`${at}/ui/events?${query}&token=${TOKEN}`, { signal: AbortSignal.timeout(10_000) });
        const answer = await body(res);
        expect([res.status, answer.error?.code], query).toEqual([503, "unavailable"]);
        expect(answer.error.message, query).toContain("the events stream cannot be read");
      }
      const lines = broken.logs.map((l) => JSON.stringify(l));
      expect(lines.filter((l) => l.includes(TOKEN))).toEqual([]);
      // Said once a request, at warn, with the path as the client sent it but the token.
      const warned = broken.logs.filter((l) => l.msg === "the web page's event stream cannot be read");
      expect(warned.map((l) => [l.level, l["path"]])).toEqual([
        [40, "/ui/events?recent=200&token=[redacted]"],
        [40, "/ui/events?since=15m&token=[redacted]"],
        [40, "/ui/events?agent=ui-alpha&heartbeats=1&token=[redacted]"],
      ]);
      expect(broken.logs.filter((l) => l.level >= 50)).toEqual([]);
    } finally {
      await broken.stop();
    }
  });
});

describe("stopping", () => {
  it("ends the open event streams before NATS drains, and the stop completes", async () => {
    const other = await startRegistry(server.url);
    const open = await openSse(`http://127.0.0.1:${other.httpPort}/ui/events?heartbeats=1`);
    streams.push(open);
    expect(open.status).toBe(200);
    await other.stop();
    await waitFor(() => open.ended, { message: "the stream ended with the registry" });
    expect(other.logs.some((l) => l.msg === "stopped")).toBe(true);
    expect(other.logs.filter((l) => l.level >= 50)).toEqual([]);
  });
});

describe("REGISTRY_UI=false", () => {
  it("serves no /ui at all", async () => {
    const off = await startRegistry(server.url, { ui: false });
    try {
      expect((await fetch(`http://127.0.0.1:${off.httpPort}/ui/`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${off.httpPort}/ui/events`)).status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});
