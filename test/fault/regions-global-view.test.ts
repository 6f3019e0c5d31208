/**
 * The global view on a two-region supercluster: each region follows the other's bucket through
 * a mirror in its own cluster, with the home region's revisions, and holds every region's
 * events in its global stream. Through a 60 s partition (issue 43) both sides keep registering,
 * answering every heartbeat of their agents and evicting their own dead ones; the remote entries
 * are kept and marked stale, never evicted by the other side; after the heal the views converge
 * and the global streams hold each event once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { globalEventsStream } from "../../src/config/region.js";

/**
 * How long the test keeps the regions apart once both sides marked each other stale: 60 s, as
 * issue 43 asks, far past the stale bound (2 s here) and 200 heartbeat intervals. Local runs
 * may shorten it with REGIONS_PARTITION_MS; CI does not set it.
 */
const PARTITION_MS = Number.parseInt(process.env["REGIONS_PARTITION_MS"] ?? "60000", 10);
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

  // Agents heartbeating on both sides through the partition, and one on each side that dies in it.
  const beats = { eu: new Tally(), us: new Tally() };
  let beating: NodeJS.Timeout | undefined;
  let partitioned = false;
  afterAll(() => clearInterval(beating));

  it(`through a ${PARTITION_MS / 1000} s partition both sides keep serving their own: no false eviction, dead agents evicted at home, remote entries kept and marked stale`, { timeout: PARTITION_MS + 120_000 }, async () => {
    for (const [c, type, id] of [[inEu, "hb-eu", "a1"], [inEu, "doomed-eu", "d1"], [inUs, "hb-us", "b1"], [inUs, "doomed-us", "d2"]] as const) {
      const r = await c.request(`register.${type}`, { spec: spec(type), instance_id: id, heartbeat_interval_ms: 300 });
      expect(r.ok).toBe(true);
    }
    let doomedBeat = true;
    // Heartbeats are requests, so every answer (or refusal, or silence) during the partition is counted.
    const beat = (side: "eu" | "us", c: RawClient, subject: string) =>
      void c.request(subject, {}, 5_000).then(
        (r) => partitioned && beats[side].add(r.ok ? "answered" : `refused ${JSON.stringify(r.body)}`),
        (e: unknown) => partitioned && beats[side].add(`unanswered ${String(e)}`),
      );
    beating = setInterval(() => {
      beat("eu", inEu, "heartbeat.hb-eu.a1");
      beat("us", inUs, "heartbeat.hb-us.b1");
      if (!doomedBeat) return;
      inEu.nc.publish(`${config.prefix}.heartbeat.doomed-eu.d1`, "{}");
      inUs.nc.publish(`${config.prefix}.heartbeat.doomed-us.d2`, "{}");
    }, 100);
    await waitFor(() => remote(us, "eu").view.get("doomed-eu") !== undefined && remote(eu, "us").view.get("doomed-us") !== undefined, {
      timeoutMs: 15_000,
      message: "both views of the other region hold its heartbeating agents",
    });

    sc.isolate("eu");
    partitioned = true;
    await waitFor(() => remote(us, "eu").stale && remote(eu, "us").stale, { timeoutMs: 15_000, message: "each side marks the other stale" });
    doomedBeat = false;
    // Both sides keep registering on their own.
    // (These never heartbeat: a 10-minute interval keeps them through the partition and the heal.)
    expect((await inEu.request("register.during-eu", { spec: spec("during-eu"), instance_id: "x1", heartbeat_interval_ms: 600_000 })).ok).toBe(true);
    expect((await inUs.request("register.during-us", { spec: spec("during-us"), instance_id: "y1", heartbeat_interval_ms: 600_000 })).ok).toBe(true);
    // The dead agents are evicted by their home regions, during the partition (their stored events are
    // read after the heal: with one server per region neither side has a JetStream meta leader now).
    await waitFor(() => eu.view.get("doomed-eu")?.status === "deregistered" && us.view.get("doomed-us")?.status === "deregistered", {
      timeoutMs: 10_000,
      message: "each region evicts its dead agent while cut off",
    });
    await new Promise((resolve) => setTimeout(resolve, PARTITION_MS));

    // Every heartbeat of the partition was answered at home: none refused (an evicted instance), none lost.
    for (const side of ["eu", "us"] as const) {
      expect(beats[side].others(), side).toEqual([]);
      expect(beats[side].count("answered"), side).toBeGreaterThan(0);
    }
    // No false eviction anywhere: the heartbeating agents stay, at home and in the other's view.
    expect(eu.view.get("hb-eu")?.status).toBe("ready");
    expect(us.view.get("hb-us")?.status).toBe("ready");
    expect(remote(us, "eu").view.get("hb-eu")?.status).toBe("ready");
    expect(remote(eu, "us").view.get("hb-us")?.status).toBe("ready");
    // Each side's view of the other's dead agent is kept as it was: only its home evicts it.
    expect(remote(us, "eu").view.get("doomed-eu")?.status).toBe("ready");
    expect(remote(eu, "us").view.get("doomed-us")?.status).toBe("ready");
    // Queries from each side still list the other's agents, marked stale.
    const seen = async (c: RawClient, type: string) => (await c.request("lookup", { capability: `${type}.run`, scope: "global" })).body.providers;
    expect(await seen(inUs, "hb-eu")).toEqual([expect.objectContaining({ agent_type: "hb-eu", region: "eu", stale: true })]);
    expect(await seen(inEu, "hb-us")).toEqual([expect.objectContaining({ agent_type: "hb-us", region: "us", stale: true })]);
    expect(remote(us, "eu").stale && remote(eu, "us").stale).toBe(true);
  });

  it("after the heal every view converges and every region's events are in each global stream once", { timeout: 3 * SOURCE_RETRY_MS + 60_000 }, async () => {
    await sc.heal("eu");
    partitioned = false;
    // A mirror cut off for long resumes when nats-server next retries it: its retries back off like a
    // source's (10 s, 20 s, ... at most 2 minutes apart), so after 60 s apart that can take a while.
    const healed = Date.now();
    await waitFor(() => !remote(us, "eu").stale && !remote(eu, "us").stale, { timeoutMs: SOURCE_RETRY_MS, intervalMs: 250, message: "the stale marks clear after the heal" });
    console.info(`regions-global-view: the stale marks cleared ${Date.now() - healed} ms after a ${PARTITION_MS} ms partition healed`);
    // Converged: each side's view of the other reaches what the other's own view held after the heal,
    // and then holds the same agents, statuses and instances as the home view.
    const [euThen, usThen] = [eu.view.revision, us.view.revision];
    await waitFor(() => remote(us, "eu").revision >= euThen && remote(eu, "us").revision >= usThen, {
      timeoutMs: SOURCE_RETRY_MS,
      message: "each view of the other region catches up after the heal",
    });
    await waitFor(() => summary(remote(us, "eu").view) === summary(eu.view) && summary(remote(eu, "us").view) === summary(us.view), {
      timeoutMs: 20_000,
      message: "each view of the other region holds what the other holds",
    });
    expect(remote(us, "eu").view.get("during-eu")?.instances.get("x1")).toBeDefined();
    expect(remote(us, "eu").view.get("doomed-eu")?.status).toBe("deregistered");
    expect(remote(eu, "us").view.get("during-us")?.instances.get("y1")).toBeDefined();
    expect(remote(eu, "us").view.get("doomed-us")?.status).toBe("deregistered");
    expect(remote(us, "eu").view.get("hb-eu")?.status).toBe("ready");
    expect(remote(eu, "us").view.get("hb-us")?.status).toBe("ready");
    expect(us.view.get("doomed-eu")).toBeUndefined();
    await expectEvictedAtHome(inEu, "eu", "doomed-eu");
    await expectEvictedAtHome(inUs, "us", "doomed-us");
    clearInterval(beating);
    await expectEveryEventOnceInEachGlobal();
  });

  /** The eviction is the home region's: stored there once, with reason evicted, at or after the instance's deadline. */
  async function expectEvictedAtHome(home: RawClient, region: string, type: string): Promise<void> {
    const evictions = async () =>
      (await readStoredEvents(home.nc, `${config.eventsStream}_${region}`)).filter((e) => e.event.type === "registry.agent.deregistered" && e.event.data.agent_type === type);
    await waitFor(async () => (await evictions()).length > 0, { timeoutMs: 10_000, message: `${region} stores the eviction of ${type}` });
    const [evicted, ...more] = await evictions();
    expect(more).toEqual([]);
    expect(evicted!.event.data.reason).toBe("evicted");
    // Never early: 3 missed intervals of 300 ms after the last heartbeat it heard.
    expect(Date.parse(String(evicted!.event.time))).toBeGreaterThanOrEqual(Date.parse(String(evicted!.event.data.last_heartbeat)) + 3 * 300);
  }

  /**
   * Every event of both regions' streams is in both global streams exactly once, and nothing else
   * is: two regions' events share ids (each region's revisions start at 1), and neither may be
   * lost to the other in a global stream, nor arrive twice.
   */
  async function expectEveryEventOnceInEachGlobal(): Promise<void> {
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
  }
});

/** A view's agents, statuses and instance ids, in one comparable line. */
const summary = (view: TestRegistry["view"]): string =>
  [...view.all()].map((a) => `${a.agent_type}:${a.status}:${[...a.instances.keys()].sort().join("+")}`).sort().join(" ");

/** Outcomes of heartbeat requests: "answered", or what went wrong. */
class Tally {
  private readonly seen = new Map<string, number>();
  add(outcome: string): void {
    this.seen.set(outcome, (this.seen.get(outcome) ?? 0) + 1);
  }
  count(outcome: string): number {
    return this.seen.get(outcome) ?? 0;
  }
  /** Every outcome but an answer, with how often it happened. */
  others(): string[] {
    return [...this.seen].filter(([o]) => o !== "answered").map(([o, n]) => `${o} x${n}`);
  }
}
