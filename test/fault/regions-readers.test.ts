/**
 * The readers of events in regional mode: each region stores its events under its own subjects,
 * and every region's global stream sources them all. Two regions' event ids collide (each
 * region's revisions start at 1), so a stored event is known by its region and id: the stream
 * message's Nats-Msg-Id and the audit mirror's row key are both `<region>.<id>`, and the event
 * carries `region`. Without that, the audit mirror (one row per key) keeps one row for the two,
 * and a global stream on some nats-server releases holds the second back for its duplicate
 * window (nats-server#4459; 2.15.2 keeps both). The web page and the audit mirror
 * beside the registry read the region's global stream, so they see every region's events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { sql, type TestDatabase } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { openSse, type SseStream } from "../harness/sse.js";
import { waitFor } from "../harness/wait.js";
import { EventStream } from "../../src/adapters/nats/event-stream.js";
import { globalEventsStream } from "../../src/config/region.js";
import { subjects as subjectsOf } from "../../src/protocol/subjects.js";
import { EventType, toCloudEvent } from "../../src/protocol/events.js";

/** nats-server's retries of a stream source it could not set up: 10 s, 20 s, 30 s... apart. */
const SOURCE_RETRY_MS = 120_000;

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: the page and the audit mirror read every region's events", () => {
  let sc: SuperclusterHandle;
  let eu: TestRegistry;
  let us: TestRegistry;
  let euDb: TestDatabase;
  let config: ReturnType<typeof testConfig>;
  let inEu: RawClient;
  let inUs: RawClient;
  let page: SseStream | undefined;

  beforeAll(async () => {
    sc = await startSupercluster({ regions: ["eu", "us"] });
    euDb = await withTestDatabase();
    config = testConfig(sc.regions.eu!.url, { region: "eu", regions: ["eu", "us"], replicaName: "eu-1", databaseUrl: euDb.url });
    const usConfig = { ...config, natsUrl: sc.regions.us!.url, region: "us", replicaName: "us-1", databaseUrl: undefined };
    [eu, us] = await Promise.all([startRegistry(config.natsUrl, {}, config), startRegistry(usConfig.natsUrl, {}, usConfig)]);
    inEu = await RawClient.connect(sc.regions.eu!.url, config.prefix);
    inUs = await RawClient.connect(sc.regions.us!.url, config.prefix);
  });
  afterAll(async () => {
    page?.close();
    await Promise.all([inEu?.close(), inUs?.close()].map((p) => p?.catch(() => undefined)));
    await Promise.all([eu?.stop("test over"), us?.stop("test over")]);
    await sc?.stop();
    await euDb?.drop();
  });

  it("events of two regions with the same id are each kept once, in both global streams and in the audit mirror", { timeout: 300_000 }, async () => {
    expect((await inEu.request("register.rd-eu", { spec: spec("rd-eu"), instance_id: "e1" })).ok).toBe(true);
    expect((await inUs.request("register.rd-us", { spec: spec("rd-us"), instance_id: "u1" })).ok).toBe(true);
    // An id both regions stored: the two regions' revisions often meet by themselves; if they did
    // not here, us stores an event with an id of eu's, as it would at that revision.
    const ids = async (region: string, c: RawClient) => (await readStoredEvents(c.nc, `${config.eventsStream}_${region}`)).map((e) => String(e.event.id));
    const [euIds, usIds] = [await ids("eu", inEu), new Set(await ids("us", inUs))];
    let collidingId = euIds.find((id) => usIds.has(id));
    if (collidingId === undefined) {
      collidingId = euIds[0]!;
      const { stream } = await EventStream.open(inUs.nc, subjectsOf(config.prefix), { name: `${config.eventsStream}_us`, replicas: 1, maxAgeMs: config.eventsMaxAgeMs, maxBytes: 0, timeoutMs: 5000, region: "us" });
      const collision = toCloudEvent(EventType.AgentDeregistered, collidingId, "rd-collide", { agent_type: "rd-collide", instance_id: "c1", reason: "deregistered" } as never, Date.now());
      expect((await stream.publish(`${config.prefix}.agent.deregistered.rd-collide`, collision, null)).duplicate).toBe(false);
    }

    for (const [region, c] of [["eu", inEu], ["us", inUs]] as const) {
      await waitFor(
        async () => {
          const global = await readStoredEvents(c.nc, globalEventsStream(config.eventsStream, region));
          const withId = global.filter((e) => e.event.id === collidingId);
          return withId.length === 2 && new Set(withId.map((e) => e.event.region)).size === 2;
        },
        { timeoutMs: SOURCE_RETRY_MS, intervalMs: 500, message: `both events with id ${collidingId} in ${region}'s global stream` },
      );
      const global = await readStoredEvents(c.nc, globalEventsStream(config.eventsStream, region));
      // Every stored event names its home region, and the subjects say the same.
      for (const e of global) expect(["eu", "us"]).toContain(e.event.region);
      expect(global.find((e) => e.subject.endsWith(".agent.registered.rd-eu"))?.event.region).toBe("eu");
      expect(global.find((e) => e.subject.endsWith(".agent.registered.rd-us"))?.event.region).toBe("us");
    }

    // The audit mirror beside eu's registry keeps a row for each, keyed by region and id.
    await waitFor(async () => (await sql(euDb.url, "SELECT count(*)::int AS n FROM audit_events WHERE event_id IN ($1, $2)", [`eu.${collidingId}`, `us.${collidingId}`]).catch(() => [{ n: 0 }]))[0].n === 2, {
      timeoutMs: 30_000,
      message: "eu's audit mirror holds both events with the colliding id",
    });
    const rows = await sql<{ agent_type: string }>(euDb.url, "SELECT agent_type FROM audit_events WHERE type = 'registry.agent.registered' ORDER BY agent_type");
    expect(rows.map((r) => r.agent_type)).toEqual(["rd-eu", "rd-us"]);
  });

  it("eu's web page shows both regions' events, each with its region", { timeout: 120_000 }, async () => {
    page = await openSse(`http://127.0.0.1:${eu.httpPort}/ui/events?recent=100`);
    expect(page.status).toBe(200);
    const registered = (type: string) => page!.events.find((e) => e.data?.type === "registry.agent.registered" && e.data?.subject === type);
    await waitFor(() => registered("rd-eu") !== undefined && registered("rd-us") !== undefined, { timeoutMs: 30_000, message: "both registrations on eu's page" });
    expect(registered("rd-eu")!.data.region).toBe("eu");
    expect(registered("rd-us")!.data.region).toBe("us");
    // The colliding event is of an agent type no region's view holds: left out, as outside regional mode.
    expect(page.events.some((e) => e.data?.subject === "rd-collide")).toBe(false);
    // The summary strip reads eu's own alerts, stored under eu's subjects.
    const summary = (await (await fetch(`http://127.0.0.1:${eu.httpPort}/ui/api/summary`)).json()) as { self_preservation: unknown };
    expect(summary.self_preservation).toMatchObject({ active: false });
  });
});
