import { request } from "node:http";
import { connect } from "node:net";
import { Gauge } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/adapters/http/metrics.js";
import { createOpsServer, type HealthReport, type OpsServer } from "../../src/kit/ops-server.js";
import { interfaceAddresses, isLoopbackHost } from "../../src/kit/hosts.js";

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(health: () => HealthReport, registry = createMetrics().registry) {
  const lines: Array<{ obj: object; msg?: string }> = [];
  const logger = { info: () => {}, error: (obj: object, msg?: string) => lines.push({ obj, msg }) };
  const server = createOpsServer({ host: "127.0.0.1", port: 0, registry, health, logger });
  servers.push(server);
  const port = await server.listen();
  return { server, base: `http://127.0.0.1:${port}`, registry, errors: lines };
}

const healthy = (): HealthReport => ({
  live: true,
  ready: true,
  checks: { nats: { ok: true }, view: { ok: true, detail: "revision 12" } },
});

/** Parses Prometheus text into sample name (with labels) -> value, checking every line's shape. */
function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

describe("ops server", () => {
  it("binds nothing until listen(), then reports the chosen port", async () => {
    const server = createOpsServer({ host: "127.0.0.1", port: 0, registry: createMetrics().registry, health: healthy });
    servers.push(server);
    expect(server.port).toBeUndefined();
    const port = await server.listen();
    expect(port).toBeGreaterThan(0);
    expect(server.port).toBe(port);
    expect(await server.listen()).toBe(port);
  });

  it("serves /metrics as Prometheus text with the registry's metrics", async () => {
    const metrics = createMetrics();
    metrics.requests.inc({ endpoint: "lookup", outcome: "ok" }, 2);
    metrics.natsConnected.set(1);
    const { base } = await start(healthy, metrics.registry);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const samples = parseExposition(await res.text());
    expect(samples.get('agent_registry_requests_total{endpoint="lookup",outcome="ok"}')).toBe(2);
    expect(samples.get("agent_registry_nats_connected")).toBe(1);
    expect(samples.has("process_cpu_user_seconds_total")).toBe(true);
  });

  it("answers /healthz 200 while live and 503 when not", async () => {
    let report = healthy();
    const { base } = await start(() => report);
    let res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toMatchObject({ status: "ok" });

    report = { live: false, ready: false, checks: { nats: { ok: false, detail: "connection closed" } } };
    res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: "fail", checks: { nats: { ok: false, detail: "connection closed" } } });
  });

  it("answers /readyz 200 when ready and 503 naming each failing check and why", async () => {
    let report = healthy();
    const { base } = await start(() => report);
    let res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", failing: [], checks: report.checks });

    report = {
      live: true,
      ready: false,
      checks: { nats: { ok: true }, view: { ok: false, detail: "catching up: 40 revisions behind" } },
    };
    res = await fetch(`${base}/readyz?verbose=1`);
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toEqual({
      status: "not_ready",
      failing: ["view"],
      checks: { nats: { ok: true }, view: { ok: false, detail: "catching up: 40 revisions behind" } },
    });
  });

  it("answers unknown paths 404 and other methods 405, both as JSON", async () => {
    const { base } = await start(healthy);
    let res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });

    res = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    expect(await res.json()).toMatchObject({ error: { code: "method_not_allowed" } });

    res = await fetch(`${base}/healthz`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("answers 500 and keeps serving when the health callback or a collector throws", async () => {
    const metrics = createMetrics();
    const { base, errors } = await start(() => {
      throw new Error("boom");
    }, metrics.registry);
    let res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: "internal", message: "ops request failed" } });

    // A gauge whose collect() rejects makes registry.metrics() reject.
    new Gauge({
      name: "broken_collector",
      help: "fails on every scrape",
      registers: [metrics.registry],
      collect: () => Promise.reject(new Error("collector broke")),
    });
    res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(500);
    expect(errors.map((e) => e.msg)).toEqual(["ops request failed", "ops request failed"]);

    res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
  });

  it("answers a malformed request with 400 rather than crashing", async () => {
    const { server } = await start(healthy);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: server.port ?? 0 }, () => socket.write("NOT HTTP AT ALL\r\n\r\n"));
      let data = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => (data += chunk));
      socket.on("end", () => resolve(data));
      socket.on("error", reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
  });

  it("close() returns promptly with a keep-alive client connected and frees the port", async () => {
    const { server, base } = await start(healthy);
    const port = server.port;
    expect((await fetch(`${base}/healthz`, { headers: { connection: "keep-alive" } })).status).toBe(200);
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(server.port).toBeUndefined();
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    await server.close();
  });

  it("rejects listen() when the port is taken", async () => {
    const { server } = await start(healthy);
    const other = createOpsServer({ host: "127.0.0.1", port: server.port ?? 0, registry: createMetrics().registry, health: healthy });
    await expect(other.listen()).rejects.toMatchObject({ code: "EADDRINUSE" });
    await other.close();
  });

  describe("Host allowlist (DNS rebinding)", () => {
    /** A GET to 127.0.0.1:port naming `host` in its Host header (fetch sets its own), or none with null. */
    function get(port: number, path: string, host: string | null): Promise<{ status: number; body: any }> {
      return new Promise((resolve, reject) => {
        const req = request({ host: "127.0.0.1", port, path, setHost: host !== null, headers: host === null ? {} : { Host: host } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: res.headers["content-type"]?.startsWith("application/json") ? JSON.parse(text) : text }));
        });
        req.on("error", reject);
        req.end();
      });
    }

    it("answers loopback names, the bound address and the names configured; refuses any other Host with 421 before a route runs", async () => {
      let uiCalls = 0;
      const server = createOpsServer({ host: "127.0.0.1", port: 0, registry: createMetrics().registry, health: healthy, allowedHosts: ["registry.internal"] });
      server.serveUi(async (_req, res) => void (uiCalls++, res.end("page")));
      servers.push(server);
      const port = await server.listen();
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, "Registry.Internal:8080", "registry.internal"]) {
        expect((await get(port, "/healthz", host)).status, host).toBe(200);
      }
      for (const host of [`attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`, "registry.internal.attacker.example", `10.0.0.5:${port}`]) {
        for (const path of ["/healthz", "/metrics", "/ui/", "/nowhere"]) {
          const res = await get(port, path, host);
          expect(res.status, `${host} ${path}`).toBe(421);
          expect(res.body.error).toMatchObject({ code: "misdirected_request", message: expect.stringContaining("REGISTRY_HTTP_ALLOWED_HOSTS") });
          // The allowlist is not echoed: it holds the machine's addresses.
          expect(res.body.error.message).not.toContain("registry.internal,");
        }
      }
      // An HTTP/1.1 request with no Host at all: node:http refuses it (400) before the server sees it.
      expect((await get(port, "/healthz", null)).status).toBe(400);
      expect(uiCalls).toBe(0);
      expect((await get(port, "/ui/", `localhost:${port}`)).status).toBe(200);
      expect(uiCalls).toBe(1);
    });

    it("bound to every interface, answers the machine's own addresses (a probe or a scrape by pod IP), and no other name", async () => {
      const own = interfaceAddresses().find((a) => !a.includes(":") && !isLoopbackHost(a));
      const server = createOpsServer({ host: "0.0.0.0", port: 0, registry: createMetrics().registry, health: healthy });
      servers.push(server);
      const port = await server.listen();
      if (own !== undefined) expect((await get(port, "/readyz", `${own}:${port}`)).status).toBe(200);
      expect((await get(port, "/readyz", `127.0.0.1:${port}`)).status).toBe(200);
      expect((await get(port, "/readyz", `agent-registry:${port}`)).status).toBe(421);
      expect((await get(port, "/readyz", `0.0.0.0:${port}`)).status).toBe(421);
    });
  });
});
