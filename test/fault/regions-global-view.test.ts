/**
 * The global view on a two-region supercluster: each region follows the other's bucket through
 * a mirror in its own cluster, with the home region's revisions, and holds every region's
 * events in its global stream. Through a partition both sides keep registering, heartbeating
 * and evicting their own agents; the remote entries are kept and marked stale, never evicted by
 * the other side; after the heal the views converge and the global streams hold each event once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { globalEventsStream } from "../../src/adapters/nats/region-streams.js";

/** How long the test keeps the regions apart: longer than the stale bound and many heartbeat windows. */
const PARTITION_MS = 10_000;
/** nats-server's retries of a stream source it could not set up: 10 s, 20 s, 30 s... apart. */
const SOURCE_RETRY_MS = 120_000;

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: the global view through a partition", () => {
  let sc: SuperclusterHandle;
  let eu: TestRegistry;
  let us: TestRegistry;
  let config: ReturnType<typeof testConfig>;
  let inEu: RawClient;
  let inUs: RawClient;
  const remote = (r: TestRegistry, region: string) => r.remoteRegions.find((x) => x.name === region)!;

  beforeAll(async () => {
    sc = await startSupercluster({ regions: ["eu", "us"] });
    config = testConfig(sc.regions.eu!.url, { region: "eu", regions: ["eu", "us"], replicaName: "eu-1", remoteStaleMs: 2_000 });
    const usConfig = { ...config, natsUrl: sc.regions.us!.url, region: "us", replicaName: "us-1" };
    [eu, us] = await Promise.all([startRegistry(config.natsUrl, {}, config), startRegistry(usConfig.natsUrl, {}, usConfig)]);
    inEu = await RawClient.connect(sc.regions.eu!.url, config.prefix);
    inUs = await RawClient.connect(sc.regions.us!.url, config.prefix);
  });
  afterAll(async () => {
    await Promise.all([inEu?.close(), inUs?.close()].map((p) => p?.catch(() => undefined)));
    await Promise.all([eu?.stop("test over"), us?.stop("test over")]);
    await sc?.stop();
  });

  it("a registration in one region appears in the other's view of it, at its home revision", async () => {
    const r = await inEu.request("register.gv-eu", { spec: spec("gv-eu"), instance_id: "e1" });
    expect(r.ok).toBe(true);
    await waitFor(() => remote(us, "eu").view.get("gv-eu") !== undefined, { timeoutMs: 15_000, message: "us's view of eu shows the registration" });
    await waitFor(() => remote(us, "eu").revision >= r.body.revision, { timeoutMs: 15_000, message: "us's view of eu reaches the reply's revision" });
    expect(remote(us, "eu").view.get("gv-eu")?.instances.get("e1")).toBeDefined();
    // The other way round, and nobody's own view holds another region's agents.
    const u = await inUs.request("register.gv-us", { spec: spec("gv-us"), instance_id: "u1" });
    expect(u.ok).toBe(true);
    await waitFor(() => remote(eu, "us").view.get("gv-us") !== undefined, { timeoutMs: 15_000, message: "eu's view of us shows the registration" });
    expect(eu.view.get("gv-us")).toBeUndefined();
    // A quiet region is not a stale one: past the bound with nothing written, the mirrors still hear from their sources.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(remote(us, "eu").stale).toBe(false);
    expect(remote(eu, "us").stale).toBe(false);
  });

  // The two regions start together, so a global stream may be made before the other region's
  // events stream exists (or before the gateway carries its interest): nats-server then sets
  // the source up again after 10 s, 20 s, ... (at most 2 minutes apart). The waits allow for
  // that retry; docs/operations.md says so for operators.
  it("each region's global stream holds every region's events on their usual subjects", { timeout: 300_000 }, async () => {
    const subject = `${config.prefix}.agent.registered.gv-eu`;
    await waitFor(
      async () => (await readStoredEvents(inUs.nc, globalEventsStream(config.eventsStream, "us"))).some((e) => e.subject === subject),
      { timeoutMs: SOURCE_RETRY_MS, intervalMs: 500, message: "eu's registration in us's global stream" },
    );
    await waitFor(
      async () => (await readStoredEvents(inEu.nc, globalEventsStream(config.eventsStream, "eu"))).some((e) => e.subject === `${config.prefix}.agent.registered.gv-us`),
      { timeoutMs: SOURCE_RETRY_MS, intervalMs: 500, message: "us's registration in eu's global stream" },
    );
  });

  it("through a partition both sides serve their own, keep the other's entries marked stale, and converge after the heal", { timeout: 300_000 }, async () => {
    // Heartbeating agents on both sides, and one in eu that will die during the partition.
    for (const [c, type, id] of [[inEu, "hb-eu", "a1"], [inEu, "doomed-eu", "d1"], [inUs, "hb-us", "b1"]] as const) {
      const r = await c.request(`register.${type}`, { spec: spec(type), instance_id: id, heartbeat_interval_ms: 300 });
      expect(r.ok).toBe(true);
    }
    let doomedBeats = true;
    const beat = setInterval(() => {
      inEu.nc.publish(`${config.prefix}.heartbeat.hb-eu.a1`, "{}");
      if (doomedBeats) inEu.nc.publish(`${config.prefix}.heartbeat.doomed-eu.d1`, "{}");
      inUs.nc.publish(`${config.prefix}.heartbeat.hb-us.b1`, "{}");
    }, 100);
    try {
      await waitFor(() => remote(us, "eu").view.get("doomed-eu") !== undefined && remote(eu, "us").view.get("hb-us") !== undefined, {
        timeoutMs: 15_000,
        message: "both views of the other region hold its heartbeating agents",
      });

      sc.isolate("eu");
      await waitFor(() => remote(us, "eu").stale && remote(eu, "us").stale, { timeoutMs: 15_000, message: "each side marks the other stale" });
      doomedBeats = false;
      // Both sides keep registering on their own.
      const during = await inEu.request("register.during-eu", { spec: spec("during-eu"), instance_id: "x1" });
      expect(during.ok).toBe(true);
      expect((await inUs.request("register.during-us", { spec: spec("during-us"), instance_id: "y1" })).ok).toBe(true);
      // The dead agent is evicted by its home region, during the partition.
      await waitFor(() => eu.view.get("doomed-eu")?.status === "deregistered", { timeoutMs: 10_000, message: "eu evicts its dead agent while cut off" });
      await new Promise((resolve) => setTimeout(resolve, PARTITION_MS));
      // No false eviction anywhere: the heartbeating agents stay, at home and in the other's view.
      expect(eu.view.get("hb-eu")?.status).toBe("ready");
      expect(us.view.get("hb-us")?.status).toBe("ready");
      expect(remote(us, "eu").view.get("hb-eu")?.status).toBe("ready");
      expect(remote(eu, "us").view.get("hb-us")?.status).toBe("ready");
      // The other side's view of the dead agent is kept as it was: only eu evicts it.
      expect(remote(us, "eu").view.get("doomed-eu")?.status).toBe("ready");

      await sc.heal("eu");
      await waitFor(() => !remote(us, "eu").stale && !remote(eu, "us").stale, { timeoutMs: 20_000, message: "the stale marks clear after the heal" });
      // Converged: each side's view of the other reaches what the other's own view held after the heal.
      const [euThen, usThen] = [eu.view.revision, us.view.revision];
      await waitFor(() => remote(us, "eu").revision >= euThen && remote(eu, "us").revision >= usThen, {
        timeoutMs: 20_000,
        message: "each view of the other region catches up after the heal",
      });
      expect(remote(us, "eu").view.get("during-eu")?.instances.get("x1")).toBeDefined();
      expect(remote(us, "eu").view.get("doomed-eu")?.status).toBe("deregistered");
      expect(remote(eu, "us").view.get("during-us")?.instances.get("y1")).toBeDefined();
      expect(us.view.get("doomed-eu")).toBeUndefined();
    } finally {
      clearInterval(beat);
    }
    // Every event of both regions' streams is in both global streams exactly once, and nothing
    // else is: a region's event ids must not collide with another's, or a global stream, which
    // drops a second message with the same Nats-Msg-Id, would lose one of them.
    const identity = (subject: string, e: { id: unknown; time: unknown }) => `${subject}|${String(e.id)}|${String(e.time)}`;
    const homeEvents = async (region: "eu" | "us", c: RawClient) =>
      (await readStoredEvents(c.nc, `${config.eventsStream}_${region}`)).map((e) => identity(e.subject.slice(`_region.${region}.`.length), e.event));
    for (const [region, c] of [["eu", inEu], ["us", inUs]] as const) {
      await waitFor(
        async () => {
          const home = [...(await homeEvents("eu", inEu)), ...(await homeEvents("us", inUs))];
          const global = (await readStoredEvents(c.nc, globalEventsStream(config.eventsStream, region))).map((e) => identity(e.subject, e.event));
          const missing = home.filter((id) => !global.includes(id));
          const twice = global.length - new Set(global).size;
          if (missing.length > 0 || twice > 0 || global.length !== home.length) {
            throw new Error(`${home.length} events in eu and us, ${global.length} in ${region}'s global stream: ${missing.length} missing, ${twice} there twice`);
          }
          return home.length > 0;
        },
        { timeoutMs: SOURCE_RETRY_MS, intervalMs: 500, message: `every region's events once each in ${region}'s global stream` },
      );
    }
  });
});
