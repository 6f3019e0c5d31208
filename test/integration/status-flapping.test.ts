/**
 * Status flapping (issue 14, finding 7): 8 instances toggling ready/draining as fast as they
 * could stored 110,880 events (51 MB) in 10 s. Now each instance's stored status changes at
 * most once a second (REGISTRY_STATUS_CHANGES_PER_SECOND), the latest wish winning.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const INSTANCES = 8;
const FLAP_MS = 4000;

it(`bounds stored status changes of ${INSTANCES} flapping instances to one a second each (figures printed)`, async () => {
  await using server = await withNatsServer();
  await using reg = await startRegistry(server.url);
  const c = await RawClient.connect(server.url, configOf(reg).prefix);
  try {
    await waitFor(() => reg.isEvictor, { message: "evictor elected" });
    for (let i = 0; i < INSTANCES; i++) expect((await c.request("register.flapper", { spec: spec("flapper"), instance_id: `f${i}`, heartbeat_interval_ms: 60_000 })).ok).toBe(true);
    const t0 = Date.now();
    let heartbeats = 0;
    await Promise.all(
      Array.from({ length: INSTANCES }, async (_, i) => {
        for (let n = 0; Date.now() - t0 < FLAP_MS; n++) {
          const r = await c.request(`heartbeat.flapper.f${i}`, { status: n % 2 === 0 ? "draining" : "ready" });
          expect(r.ok).toBe(true);
          heartbeats++;
        }
        // The last word: every instance ends draining.
        expect((await c.request(`heartbeat.flapper.f${i}`, { status: "draining" })).ok).toBe(true);
      }),
    );
    const seconds = (Date.now() - t0) / 1000;
    // The held changes land within a window: every instance ends as its last heartbeat asked.
    await waitFor(() => [...(reg.view.get("flapper")?.instances.values() ?? [])].every((i) => i.status === "draining"), { timeoutMs: 5000, message: "latest status stored" });
    await new Promise((r) => setTimeout(r, 500)); // let the publisher store the last events
    const events = (await readStoredEvents(c.nc, configOf(reg).eventsStream)).filter((e) => e.event.type === "registry.agent.status_changed");
    const bytes = (await (await jetstreamManager(c.nc)).streams.info(configOf(reg).eventsStream)).state.bytes;
    // One change per instance per second at most, plus the first of each window.
    expect(events.length).toBeLessThanOrEqual(INSTANCES * (Math.ceil(seconds) + 2));
    expect(heartbeats).toBeGreaterThan(events.length * 5);
    console.log(`status flapping: ${INSTANCES} instances, ${heartbeats} toggling heartbeats in ${seconds.toFixed(1)} s: ${events.length} status_changed events stored, stream ${bytes} bytes`);
  } finally {
    await c.close();
  }
});
