/**
 * /ui/events does not buffer without bound for a client that stops reading: once more than
 * maxBufferBytes wait for it, the stream is cut (the browser reconnects and resumes from its
 * last id), its consumer is stopped, and its place is freed; the bound on open streams holds
 * for requests that arrive together.
 */
import { createServer, type Server } from "node:http";
import { connect as connectTcp, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EventFeed } from "../../src/ui/server/event-feed.js";
import { EventVisibility } from "../../src/ui/server/event-visibility.js";
import { RegistryClient } from "../../src/client/registry-client.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let http: Server;
let socket: Socket | undefined;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { ui: false });
  nc = await connect({ servers: server.url });
});
afterAll(async () => {
  socket?.destroy();
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()));
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

it("cuts off a client that reads slower than events come, and frees its place", async () => {
  const { prefix, eventsStream } = configOf(reg);
  const warnings: object[] = [];
  // A shared agent type, so the page may see its heartbeats.
  await new RegistryClient(nc, { prefix }).register({ spec: spec("slow") as any, instance_id: "s1", status: "ready" });
  await waitFor(() => reg.view.get("slow") !== undefined, { message: "the replica's view holds the agent" });
  const visibility = new EventVisibility(reg.view, (revision) => waitFor(() => reg.view.revision >= revision));
  const feed = new EventFeed({ nc, prefix, stream: eventsStream, maxClients: 1, visibility, maxBufferBytes: 64 * 1024, log: { warn: (obj) => void warnings.push(obj) } });
  http = createServer((req, res) => void feed.serve(req, res, new URLSearchParams("heartbeats=1")));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as AddressInfo).port;

  // A client that asks for the stream and then never reads a byte.
  socket = connectTcp(port, "127.0.0.1");
  socket.write("GET /ui/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
  socket.pause();
  await waitFor(() => feed.clients === 1, { message: "the stream is open" });

  // Heartbeat events (core NATS) of 32 kB each, until the kernel's buffers and then ours fill.
  const big = JSON.stringify({ specversion: "1.0", type: "registry.agent.heartbeat", subject: "slow", data: { pad: "x".repeat(32 * 1024) } });
  await waitFor(
    async () => {
      for (let i = 0; i < 20; i++) nc.publish(`${prefix}.agent.heartbeat.slow`, big);
      await nc.flush();
      return feed.clients === 0;
    },
    { timeoutMs: 20_000, intervalMs: 20, message: "the slow client was cut off" },
  );
  expect(warnings.length).toBe(1);
  expect((warnings[0] as { buffered: number }).buffered).toBeGreaterThan(64 * 1024);

  // Requests arriving together get no more places than the bound, consumer creation in flight or not.
  const together = await Promise.all([0, 1, 2, 3].map(() => fetch(`http://127.0.0.1:${port}/ui/events`, { signal: AbortSignal.timeout(10_000) })));
  expect(together.map((r) => r.status).sort()).toEqual([200, 503, 503, 503]);
  for (const r of together) await r.body?.cancel();
  await waitFor(() => feed.clients === 0, { message: "the cancelled stream freed its place" });
});
