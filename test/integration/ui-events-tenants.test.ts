/**
 * /ui/events carries only what the page's queries can show (issue 35, item 9): the page asks
 * with no tenant, so a tenant-scoped agent's events (registered, status, heartbeats,
 * deregistered) and a capability only it declares never reach it, live or replayed, while a
 * shared agent's do.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { openSse, type SseStream } from "../harness/sse.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let nc: NatsConnection;
let base: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  base = `http://127.0.0.1:${reg.httpPort}`;
  nc = await connect({ servers: server.url });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
});
afterAll(async () => {
  for (const s of streams) s.close();
  await nc?.close();
  await reg?.stop();
  await server?.stop();
});

async function sse(path: string): Promise<SseStream> {
  const s = await openSse(`${base}${path}`);
  streams.push(s);
  expect(s.status).toBe(200);
  return s;
}

it("streams a shared agent's events and none of a tenant's agent, live and replayed", async () => {
  const { prefix } = configOf(reg);
  const shared = new RegistryClient(nc, { prefix });
  const acme = new RegistryClient(nc, { prefix, tenant: "acme" });
  const live = await sse("/ui/events?heartbeats=1");

  // The tenant's agent first: everything it causes is in the stream before the shared agent's last event.
  const secretCap = { name: "acme.secret-capability", description: "only acme has it", input_schema: {}, output_schema: {} };
  await acme.register({ spec: spec("acme-secret", { tenant_scope: "acme", capabilities: [secretCap] }) as any, instance_id: "s1", status: "ready" });
  await shared.register({ spec: spec("open-agent") as any, instance_id: "o1", status: "ready" });
  await waitFor(async () => {
    await acme.heartbeat("acme-secret", "s1", { active_tasks: 2 });
    await shared.heartbeat("open-agent", "o1", { active_tasks: 1 });
    return live.events.some((e) => e.event === "registry.agent.heartbeat" && e.data.subject === "open-agent");
  }, { message: "the shared agent's heartbeat streamed" });
  await acme.deregister("acme-secret", "s1");
  await shared.deregister("open-agent", "o1");
  await waitFor(() => live.events.some((e) => e.event === "registry.agent.deregistered" && e.data.subject === "open-agent"), { message: "the shared agent's deregistration streamed" });

  const types = (s: SseStream) => s.events.filter((e) => e.data.subject === "open-agent").map((e) => e.event);
  expect(types(live)).toEqual(expect.arrayContaining(["registry.agent.registered", "registry.agent.heartbeat", "registry.agent.deregistered"]));
  expect(live.events.some((e) => e.event === "registry.capability.changed" && e.data.data.capability === "open-agent.run")).toBe(true);
  const text = JSON.stringify(live.events);
  expect(text).not.toContain("acme-secret");
  expect(text).not.toContain("acme.secret-capability");

  // A replay reads the same events from the stream, the tenant's included: the page gets the same cut.
  const replay = await sse("/ui/events?recent=50");
  await waitFor(() => replay.events.some((e) => e.event === "registry.agent.deregistered" && e.data.subject === "open-agent"), { message: "the replay reached the shared agent's deregistration" });
  expect(types(replay)).toEqual(expect.arrayContaining(["registry.agent.registered", "registry.agent.deregistered"]));
  expect(JSON.stringify(replay.events)).not.toContain("acme-secret");
  expect(JSON.stringify(replay.events)).not.toContain("acme.secret-capability");
});
