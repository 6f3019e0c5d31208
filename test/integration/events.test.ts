/**
 * Events come from the store's change log: exactly one stored event per transition, in store
 * order, CloudEvents envelopes on the subjects of PROTOCOL.md section 5; heartbeats are core
 * NATS only.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

it("stores exactly one event per transition, in store order, as CloudEvents", async () => {
  const heartbeats: any[] = [];
  const sub = c.nc.subscribe(`${c.prefix}.agent.heartbeat.>`, { callback: (_e, m) => void heartbeats.push(m.json()) });
  const r1 = await c.request("register.ev-a", { spec: spec("ev-a"), instance_id: "one" });
  await c.request("register.ev-a", { spec: spec("ev-a"), instance_id: "two" });
  await c.request("heartbeat.ev-a.one", { status: "draining" });
  await c.request("heartbeat.ev-a.one", { active_tasks: 2 }); // no transition: no stored event
  await c.request("register.ev-a", { spec: spec("ev-a", { version: "1.1.0", capabilities: [{ name: "ev-a.run", description: "runs v2", input_schema: { type: "object" }, output_schema: {} }] }), instance_id: "two" });
  await c.request("deregister.ev-a.one", {});
  const last = await c.request("deregister.ev-a.two", {});
  const expected = [
    "agent.registered:one",
    "capability.changed:added",
    "agent.registered:two",
    "agent.status_changed:one",
    "capability.changed:updated",
    "agent.deregistered:one",
    "agent.deregistered:two",
    "capability.changed:removed",
  ];
  const storedOfEvA = async () => (await readStoredEvents(c.nc, configOf(reg).eventsStream)).filter((e) => e.event.subject === "ev-a" || e.event.subject === "ev-a.run");
  // The last deregistration derives two events (the capability's removal second): wait for as
  // many as expected, not for the first event of the last revision.
  await waitFor(async () => (await storedOfEvA()).some((e) => e.event.data.revision === last.body.revision) && (await storedOfEvA()).length >= expected.length, {
    message: "last transition stored",
  });
  const stored = await storedOfEvA();
  const summary = stored.map((e) => `${e.event.type.replace("registry.", "")}:${e.event.data.instance_id ?? e.event.data.change}`);
  expect(summary).toEqual(expected);
  const ids = stored.map((e) => e.event.id);
  expect(new Set(ids).size).toBe(ids.length);
  const revisions = stored.map((e) => e.event.data.revision);
  expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  const first = stored[0]!;
  expect(first.subject).toBe(`${c.prefix}.agent.registered.ev-a`);
  expect(first.event).toMatchObject({
    specversion: "1.0",
    source: "agent-registry",
    type: "registry.agent.registered",
    subject: "ev-a",
    datacontenttype: "application/json",
    data: { agent_type: "ev-a", version: "1.0.0", instance_id: "one", tenant_scope: null, first_instance: true, spec_changed: true, revision: r1.body.revision },
  });
  expect(first.event.id).toBe(`${r1.body.revision}-0`);
  expect(stored[1]!.subject).toBe(`${c.prefix}.capability.changed.ev-a.run`);
  expect(stored[5]!.event.data).toMatchObject({ reason: "graceful", agent_removed: false });
  await waitFor(() => heartbeats.length >= 2, { message: "heartbeat events on core NATS" });
  expect(heartbeats[0]).toMatchObject({ type: "registry.agent.heartbeat", data: { agent_type: "ev-a", instance_id: "one" } });
  expect(stored.some((e) => e.event.type === "registry.agent.heartbeat")).toBe(false);
  sub.unsubscribe();
});
