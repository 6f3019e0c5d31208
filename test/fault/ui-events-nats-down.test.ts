/**
 * /ui/events with NATS out of reach (docs/ui.md): a nats-server that stops answering (SIGSTOP,
 * as a starved or suspended host) makes the feed's JetStream calls time out, and a stopped one
 * (killed here) takes the connection down. Either way the page's request gets 503 with a structured error,
 * within the registry's request timeout or at once, and the logs never show its ?token=.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { canControlNatsServers, withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const TOKEN = "nats-down-ui-token";
const TIMEOUT_MS = 1500;
let server: NatsTestServer;
let reg: TestRegistry;
let base: string;

beforeAll(async () => {
  if (!canControlNatsServers()) return;
  server = await withNatsServer();
  reg = await startRegistry(server.url, { uiToken: TOKEN, requestTimeoutMs: TIMEOUT_MS });
  base = `http://127.0.0.1:${reg.httpPort}`;
});
afterAll(async () => {
  await reg?.stop();
  await server?.stop();
});

async function events(query: string): Promise<{ status: number; body: any; ms: number }> {
  const began = Date.now();
  const res = await fetch(`${base}/ui/events?${query}&token=${TOKEN}`, { signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), ms: Date.now() - began };
}

it.runIf(canControlNatsServers())("a paused server: 503 once the request times out, and the token is in no log line", async () => {
  const pid = (server as unknown as { pid: number }).pid;
  process.kill(pid, "SIGSTOP");
  let paused: Awaited<ReturnType<typeof events>>[] = [];
  try {
    // ?recent= reads the stream's state first (the Events view asks for 200); the others only make a consumer.
    paused = [await events("recent=200"), await events("since=15m")];
  } finally {
    process.kill(pid, "SIGCONT");
  }
  for (const answer of paused) {
    expect([answer.status, answer.body.error?.code]).toEqual([503, "unavailable"]);
    expect(answer.body.error.message).toContain("the events stream cannot be read");
    expect(answer.ms).toBeLessThan(TIMEOUT_MS + 3000);
  }
  expect(reg.logs.map((l) => JSON.stringify(l)).filter((l) => l.includes(TOKEN))).toEqual([]);
  expect(reg.logs.filter((l) => l.msg === "the web page's event stream cannot be read").map((l) => l["path"])).toEqual([
    "/ui/events?recent=200&token=[redacted]",
    "/ui/events?since=15m&token=[redacted]",
  ]);
});

it.runIf(canControlNatsServers())("a stopped server: 503 at once, without waiting for a timeout", async () => {
  await server.kill();
  try {
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 503, { message: "the replica saw NATS go" });
    const answer = await events("recent=200");
    expect([answer.status, answer.body.error?.code]).toEqual([503, "unavailable"]);
    expect(answer.body.error.message).toBe("the events stream cannot be read: the registry's NATS connection is down");
    expect(answer.ms).toBeLessThan(TIMEOUT_MS);
  } finally {
    await server.restart();
  }
  await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 20_000, message: "the replica is back with NATS" });
  expect(reg.logs.map((l) => JSON.stringify(l)).filter((l) => l.includes(TOKEN))).toEqual([]);
});
