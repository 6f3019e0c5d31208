/**
 * Every reader of the events stream leaves no consumer behind: watchEvents' loop broken, ended
 * by an error or aborted, `agent-registry watch` stopped with Ctrl-C, and a /ui/events client
 * that disconnects delete theirs at once (counted on the server, polled, not slept for). A
 * reader killed with -9 cannot: its consumer carries a short inactive threshold, so the server
 * removes it soon after (30 s by default; 1 s here, set through the SDK's option).
 */
import { spawn } from "node:child_process";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { nanos } from "@nats-io/nats-core";
import { jetstreamManager, type ConsumerInfo, type JetStreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CONSUMER_INACTIVE_MS, watchEvents } from "../../src/client/events.js";
import { ROOT, ensureBuilt, spawnCli } from "../harness/cli.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, RawClient, type TestRegistry } from "../harness/registry.js";
import { openSse } from "../harness/sse.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let jsm: JetStreamManager;
let raw: RawClient;
let stream: string;
let prefix: string;

beforeAll(async () => {
  await ensureBuilt();
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  ({ eventsStream: stream, prefix } = configOf(reg));
  nc = await connect({ servers: server.url });
  jsm = await jetstreamManager(nc);
  raw = await RawClient.connect(server.url, prefix);
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
  await raw.request("register.ec-a", { spec: spec("ec-a"), instance_id: "one", heartbeat_interval_ms: 3_600_000 });
}, 180_000);
afterAll(async () => {
  await raw?.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

async function consumers(): Promise<ConsumerInfo[]> {
  return jsm.consumers.list(stream).next();
}

/** Waits until the stream has `n` consumers; "a couple of seconds" at most for 0. */
async function untilConsumers(n: number, message: string, timeoutMs = 2_000): Promise<ConsumerInfo[]> {
  let last: ConsumerInfo[] = [];
  try {
    await waitFor(async () => (last = await consumers()).length === n, { timeoutMs, intervalMs: 50, message });
  } catch (e) {
    throw new Error(`${(e as Error).message}: ${last.length} consumers, not ${n}`, { cause: e });
  }
  return last;
}

it("watchEvents deletes its consumer when the loop is broken, when its body throws, and when its signal is aborted while it waits", async () => {
  expect(await consumers()).toEqual([]);
  for await (const e of watchEvents(nc, { since: 1, stream, prefix })) {
    expect(e.event.type).toBe("registry.agent.registered");
    expect((await consumers()).map((c) => c.config.inactive_threshold)).toEqual([nanos(CONSUMER_INACTIVE_MS)]);
    break;
  }
  await untilConsumers(0, "the broken loop's consumer is gone");

  await expect(
    (async () => {
      for await (const _ of watchEvents(nc, { since: 1, stream, prefix })) throw new Error("the reader failed");
    })(),
  ).rejects.toThrow("the reader failed");
  await untilConsumers(0, "the consumer of a loop that threw is gone");

  // Waiting for an event that does not come: only the signal can end this loop.
  const abort = new AbortController();
  const waiting = (async () => {
    const seen: number[] = [];
    for await (const e of watchEvents(nc, { stream, prefix, signal: abort.signal })) seen.push(e.seq);
    return seen;
  })();
  await untilConsumers(1, "the watch waits for new events");
  abort.abort();
  expect(await waiting).toEqual([]);
  await untilConsumers(0, "the aborted watch's consumer is gone");
});

it("agent-registry watch stopped with Ctrl-C deletes its consumer before it exits", { timeout: 60_000 }, async () => {
  const watch = spawnCli(["watch", "--since", "1"], { NATS_URL: server.url, REGISTRY_PREFIX: prefix, REGISTRY_EVENTS_STREAM: stream });
  try {
    await watch.waitForLine(/agent\.registered +ec-a/);
    const [c] = await untilConsumers(1, "watch's consumer");
    expect(c?.config.inactive_threshold).toBe(nanos(CONSUMER_INACTIVE_MS));
    expect(await watch.stop("SIGINT")).toBe(0);
    await untilConsumers(0, "watch's consumer is gone");
  } finally {
    await watch.stop("SIGKILL");
  }
});

it("/ui/events deletes its consumer when the browser closes the connection", async () => {
  const sse = await openSse(`http://127.0.0.1:${reg.httpPort}/ui/events?recent=10`);
  try {
    expect(sse.status).toBe(200);
    await waitFor(() => sse.events.some((e) => e.event === "registry.agent.registered"), { message: "the replay" });
    const [c] = await untilConsumers(1, "the page's consumer");
    expect(c?.config.inactive_threshold).toBe(nanos(CONSUMER_INACTIVE_MS));
  } finally {
    sse.close();
  }
  await untilConsumers(0, "the closed page's consumer is gone");
});

it("a watching process killed with -9 leaves a consumer that the server removes after the inactive threshold", { timeout: 60_000 }, async () => {
  // A script on the SDK, run from source, that watches with a 1 s threshold until it is killed.
  const script = `
    import { connect } from "@nats-io/transport-node";
    import { watchEvents } from "./src/client/events.js";
    const nc = await connect({ servers: ${JSON.stringify(server.url)} });
    for await (const e of watchEvents(nc, { since: 1, stream: ${JSON.stringify(stream)}, prefix: ${JSON.stringify(prefix)}, inactiveThresholdMs: 1000 })) console.log("seq", e.seq);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    await waitFor(() => out.includes("seq 1"), { timeoutMs: 30_000, message: `the child watches (output: ${out})` });
    const [c] = await untilConsumers(1, "the child's consumer");
    expect(c?.config.inactive_threshold).toBe(nanos(1000));
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
  // It had no chance to delete it: the server does, once the threshold has passed.
  await untilConsumers(0, "the killed process's consumer is removed by the server", 5_000);
});
