/**
 * `agent-registry mcp` started while NATS cannot be reached (issue 35, item 20): it used to
 * exit at start, so an MCP client saw only "Connection closed". Now it serves at once, over
 * stdio and over HTTP: `initialize` and `tools/list` answer, `registry_health` reports the
 * outage (connected false, the URL, the last error, since when), a registry tool answers
 * `unavailable` naming the URL and that it is still connecting, and stderr has one readable
 * line about it, no stack trace. Then a nats-server and a registry come up on that port and the
 * same sessions turn healthy and look capabilities up, without a restart of the front; the
 * capability event subscription, made on the connection once there is one, notifies a
 * subscribed client. Stopping while still connecting (SIGTERM, or stdin closed) exits cleanly.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { ROOT } from "../harness/cli.js";
import { CLI_FROM_SOURCE, call, mcpOverHttp, mcpOverStdio, startMcpHttpProcess, type McpConnection, type McpHttpProcess } from "../harness/mcp.js";
import { pickFreePort } from "../harness/ports.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const PREFIX = "outage";
let port: number;
let natsUrl: string;
let stdio: McpConnection;
let httpFront: McpHttpProcess;
let http: McpConnection;
let server: NatsServerHandle | undefined;
let registry: TestRegistry | undefined;
let nc: NatsConnection | undefined;

beforeAll(async () => {
  // A port where nothing listens now; the nats-server of the second half binds it.
  port = await pickFreePort();
  natsUrl = `nats://127.0.0.1:${port}`;
  [stdio, httpFront] = await Promise.all([mcpOverStdio(["--nats", natsUrl, "--prefix", PREFIX]), startMcpHttpProcess(["--nats", natsUrl, "--prefix", PREFIX])]);
  http = await mcpOverHttp(httpFront.url);
}, 60_000);

afterAll(async () => {
  await stdio?.close();
  await http?.close();
  await httpFront?.stop();
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

const fronts = () => [
  ["stdio", stdio],
  ["HTTP", http],
] as const;

describe("while NATS cannot be reached", () => {
  it("answers initialize and tools/list on both transports", async () => {
    for (const [name, front] of fronts()) {
      expect(front.client.getServerVersion()?.name, name).toBe("agent-registry");
      const { tools } = await front.client.listTools();
      expect(tools.map((t) => t.name), name).toEqual(expect.arrayContaining(["capability_lookup", "registry_health"]));
    }
  });

  it("registry_health reports the outage: not connected, the URL, the last error and since when", async () => {
    for (const [name, front] of fronts()) {
      const health = await call(front.client, "registry_health");
      expect(health.isError, name).toBe(false);
      expect(health.body, name).toMatchObject({ healthy: false, connected: false, nats_url: natsUrl, agents: null, ready_agents: null, revision: null });
      expect(health.body.last_error, name).toMatch(/refused/i);
      expect(Number.isNaN(Date.parse(health.body.since)), name).toBe(false);
      expect(health.body.reason, name).toContain(natsUrl);
    }
  });

  it("a registry tool answers unavailable at once, naming the URL and that it is still connecting", async () => {
    for (const [name, front] of fronts()) {
      const r = await call(front.client, "capability_lookup", { capability: "text.summarize" });
      expect(r.isError, name).toBe(true);
      expect(r.body.error.code, name).toBe("unavailable");
      expect(r.body.error.message, name).toContain(natsUrl);
      expect(r.body.error.message, name).toContain("still connecting");
    }
  });

  it("a resource read is refused with the same reason, and an unknown resource is still refused as unknown", async () => {
    await expect(stdio.client.readResource({ uri: "registry://capabilities" })).rejects.toThrow(/still connecting/);
    await expect(stdio.client.readResource({ uri: "registry://nothing" })).rejects.toThrow(/no resource/);
  });

  it("logs one readable line on stderr, and no stack trace", () => {
    for (const [name, stderr] of [["stdio", stdio.stderr()], ["HTTP", httpFront.stderr()]] as const) {
      const lines = stderr.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as { msg: string; err?: unknown });
      const outage = lines.filter((l) => l.msg.includes("unreachable"));
      expect(outage.map((l) => l.msg), name).toEqual([`NATS at ${natsUrl} unreachable (connection refused); serving MCP and retrying every 1s`]);
      expect(stderr, name).not.toMatch(/\n\s+at /);
      expect(lines.filter((l) => l.err !== undefined), name).toEqual([]);
    }
  });
});

describe("stopping while still connecting", () => {
  it("SIGTERM ends the HTTP front with exit code 0", async () => {
    const other = await startMcpHttpProcess(["--nats", natsUrl, "--prefix", PREFIX]);
    await waitFor(() => other.stderr().includes("retrying every"), { timeoutMs: 20_000, message: "the first failed attempt" });
    expect(await other.stop()).toBe(0);
  });

  it("closing stdin ends the stdio front with exit code 0", async () => {
    const child = spawn(process.execPath, [...CLI_FROM_SOURCE, "mcp", "--nats", natsUrl], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }, stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await waitFor(() => err.includes("retrying every"), { timeoutMs: 20_000, message: "the first failed attempt" });
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});

describe("once NATS and the registry come up", () => {
  it("the same sessions turn healthy and look capabilities up, and a subscribed client hears of changes", async () => {
    const updates: string[] = [];
    stdio.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
    });
    await stdio.client.subscribeResource({ uri: "registry://capabilities" });

    server = await startNatsServer({ port, jetstream: true });
    registry = await startRegistry(server.url, { prefix: PREFIX });
    for (const [name, front] of fronts()) {
      await waitFor(async () => (await call(front.client, "registry_health")).body.healthy === true, { timeoutMs: 30_000, message: `${name}: registry_health to turn healthy` });
      const health = await call(front.client, "registry_health");
      expect(health.body, name).toMatchObject({ healthy: true, connected: true, nats_url: natsUrl, last_error: null, agents: 0 });
    }

    nc = await connect({ servers: server.url });
    const agents = new RegistryClient(nc, { prefix: PREFIX });
    await agents.register({
      spec: spec("summarizer", { capabilities: [{ name: "text.summarize", description: "summarize a text", input_schema: {}, output_schema: {} }] }) as AgentSpecInput,
      heartbeat_interval_ms: 3_600_000,
    });
    // The registry's view applies the write shortly after the reply (the fronts send no
    // min_revision), so a lookup at once can still answer no providers: wait for the view.
    for (const [name, front] of fronts()) {
      let providers: string[] = [];
      await waitFor(
        async () => {
          const found = await call(front.client, "capability_lookup", { capability: "text.summarize" });
          expect(found.isError, name).toBe(false);
          providers = found.body.providers.map((p: { agent_type: string }) => p.agent_type);
          return providers.length > 0;
        },
        { timeoutMs: 10_000, message: `${name}: the lookup to see the registered agent` },
      );
      expect(providers, name).toEqual(["summarizer"]);
    }
    await waitFor(() => updates.length > 0, { timeoutMs: 10_000, message: "a resources/updated notification" });
    expect(updates[0]).toBe("registry://capabilities");
    expect(stdio.stderr()).toContain(`connected to NATS at ${natsUrl}`);
  });
});
