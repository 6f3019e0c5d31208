/**
 * Event ids are store positions (`<revision>-<index>`), unique within a region only: each
 * region's revisions start at 1, so two regions store events with the same id. Their stream
 * messages carry the region-qualified key (`eventKey`, `<region>.<id>`) as Nats-Msg-Id and the
 * event its `region`, so a global stream sourcing both holds both, promptly, on any server
 * version: how nats-server treats a Nats-Msg-Id seen from two sources has changed between
 * versions (a sourcing stream held such messages back for its duplicate window, nats-server#4459;
 * later releases changed sourcing dedupe, #7651 and #7896), and here no two sources share one.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventStream } from "../../src/adapters/nats/event-stream.js";
import { globalEventsStream } from "../../src/config/region.js";
import { openGlobalEvents } from "../../src/adapters/nats/region-streams.js";
import { regionEventsStream } from "../../src/config/region.js";
import { eventId } from "../../src/domain/view/events.js";
import { EventType, eventKey, toCloudEvent } from "../../src/protocol/events.js";
import { subjects } from "../../src/protocol/subjects.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { readStoredEvents } from "../harness/registry.js";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { waitFor } from "../harness/wait.js";

const REGIONS = ["eu", "us"];
const BASE = `EV_ids_${process.pid}`;
const S = subjects(`ids${process.pid}.registry`);

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: the same event id from two regions", () => {
  let sc: SuperclusterHandle;
  const conns: NatsConnection[] = [];

  beforeAll(async () => {
    sc = await startSupercluster({ regions: REGIONS });
    for (const r of REGIONS) conns.push(await connect({ servers: sc.regions[r]!.url.split(","), maxReconnectAttempts: -1 }));
  });
  afterAll(async () => {
    await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
    await sc?.stop();
  });

  it("is kept twice in a region's global stream, once from each region, told apart by region", async () => {
    const settings = { replicas: 1, maxAgeMs: 3_600_000, maxBytes: 0, timeoutMs: 10_000 };
    // Each region stores an event at revision 1, index 0 of its own bucket: the same id, as the publisher gives it,
    // through the regional EventStream (which adds the region and the region-qualified Nats-Msg-Id).
    const id = eventId(1, 0);
    for (const [i, region] of REGIONS.entries()) {
      const { stream } = await EventStream.open(conns[i]!, S, { ...settings, name: regionEventsStream(BASE, region), region });
      const event = toCloudEvent(EventType.AgentRegistered, id, `from-${region}`, { agent_type: `from-${region}` }, Date.now());
      const stored = await stream.publish(S.event(EventType.AgentRegistered, `from-${region}`), event, { revision: 1, index: 0 });
      expect(stored.duplicate).toBe(false);
    }
    // Made after both region streams exist, so its sources start at once.
    const { name } = await openGlobalEvents(conns[0]!, { ...settings, eventsStream: BASE, region: "eu", regions: REGIONS, prefix: S.prefix });
    expect(name).toBe(globalEventsStream(BASE, "eu"));
    const jsm = await jetstreamManager(conns[0]!);
    await waitFor(async () => (await jsm.streams.info(name)).state.messages >= 2, { timeoutMs: 30_000, message: "both regions' events in eu's global stream" });
    const global = await readStoredEvents(conns[0]!, name);
    expect(global.map((e) => `${e.subject} ${e.event.id} ${e.event.region}`).sort()).toEqual(
      REGIONS.map((r) => `${S.event(EventType.AgentRegistered, `from-${r}`)} ${id} ${r}`).sort(),
    );
    // Each message's Nats-Msg-Id is the event's key, and nats-server's Nats-Stream-Source header names its region's stream.
    const headers = await Promise.all(global.map(async (e) => (await jsm.streams.getMessage(name, { seq: e.seq }))?.header));
    expect(headers.map((h) => h?.get("Nats-Msg-Id")).sort()).toEqual(REGIONS.map((r) => eventKey({ id, region: r })).sort());
    expect(headers.map((h) => h?.get("Nats-Stream-Source").split(" ")[0]).sort()).toEqual(REGIONS.map((r) => regionEventsStream(BASE, r)).sort());
  });
});
