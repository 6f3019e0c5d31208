/**
 * Regional mode on a two-region supercluster: each region's replica keeps its own bucket and
 * events stream, placed in its own cluster, holds its own evictor lease, and takes the writes of
 * the agents connected to its cluster (gateways prefer a local queue subscriber). An agent in
 * one region is stored, and evicted, in that region only; its stored events are republished on
 * the usual subjects, where a watcher in the other region hears them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, readStoredEvents, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { storeNames } from "../../src/config/region.js";

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: home region only", () => {
  let sc: SuperclusterHandle;
  let eu: TestRegistry;
  let us: TestRegistry;
  let euConfig: ReturnType<typeof testConfig>;
  let usConfig: ReturnType<typeof testConfig>;
  const clients: RawClient[] = [];

  beforeAll(async () => {
    sc = await startSupercluster({ regions: ["eu", "us"] });
    euConfig = testConfig(sc.regions.eu!.url, { region: "eu", regions: ["eu", "us"], replicaName: "eu-1" });
    // The same base names and prefix in every region: only the region differs.
    usConfig = { ...euConfig, natsUrl: sc.regions.us!.url, region: "us", replicaName: "us-1" };
    [eu, us] = await Promise.all([startRegistry(euConfig.natsUrl, {}, euConfig), startRegistry(usConfig.natsUrl, {}, usConfig)]);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all([eu?.stop("test over"), us?.stop("test over")]);
    await sc?.stop();
  });
  const client = async (region: "eu" | "us") => {
    const c = await RawClient.connect(sc.regions[region]!.url, euConfig.prefix);
    clients.push(c);
    return c;
  };

  it("places each region's bucket and events stream in its own cluster, and each region has its own evictor", async () => {
    const c = await client("eu");
    const jsm = await jetstreamManager(c.nc);
    for (const [region, config] of [["eu", euConfig], ["us", usConfig]] as const) {
      const names = storeNames(config);
      expect(names.bucket).toBe(`${euConfig.bucket}-${region}`);
      expect((await jsm.streams.info(`KV_${names.bucket}`)).cluster?.name).toBe(region);
      expect((await jsm.streams.info(names.eventsStream)).cluster?.name).toBe(region);
    }
    await waitFor(() => eu.isEvictor && us.isEvictor, { timeoutMs: 10_000, message: "each region's replica holds its own region's lease" });
  });

  it("stores an agent in the region it connects to, and only there", async () => {
    const inEu = await client("eu");
    const inUs = await client("us");
    const a = await inEu.request("register.home-eu", { spec: spec("home-eu"), instance_id: "e1" });
    const b = await inUs.request("register.home-us", { spec: spec("home-us"), instance_id: "u1" });
    expect(a.ok && b.ok).toBe(true);
    await waitFor(() => eu.view.get("home-eu") !== undefined && us.view.get("home-us") !== undefined, { message: "each registration in its home view" });
    // A region's own view holds its own agents only; the others' are in its remote views (regions-global-view).
    expect(eu.view.get("home-us")).toBeUndefined();
    expect(us.view.get("home-eu")).toBeUndefined();
    const euEvents = await readStoredEvents(inEu.nc, storeNames(euConfig).eventsStream);
    const registeredInEu = euEvents.filter((e) => e.event.type === "registry.agent.registered").map((e) => e.event.data.agent_type);
    expect(registeredInEu).toEqual(["home-eu"]);
    expect(euEvents.every((e) => e.subject.startsWith(`_region.eu.${euConfig.prefix}.`))).toBe(true);
  });

  it("republishes a region's stored events on the usual subjects, heard in the other region", async () => {
    const inEu = await client("eu");
    const inUs = await client("us");
    const heard: string[] = [];
    inUs.nc.subscribe(`${euConfig.prefix}.agent.registered.>`, { callback: (_e, m) => void heard.push(m.subject) });
    await inUs.nc.flush();
    // Interest crosses the gateway a moment after the subscription: register until it is heard.
    let n = 0;
    await waitFor(
      async () => {
        n++;
        await inEu.request(`register.heard-${n}`, { spec: spec(`heard-${n}`), instance_id: "h1" });
        return heard.length > 0;
      },
      { timeoutMs: 15_000, intervalMs: 300, message: "a region's event republished and heard in the other region" },
    );
    expect(heard[0]).toMatch(new RegExp(`^${euConfig.prefix.replace(".", "\\.")}\\.agent\\.registered\\.heard-\\d+$`));
  });

  it("evicts a silent agent in its home region; the other region never touches it", async () => {
    const inEu = await client("eu");
    const reg = await inEu.request("register.silent-eu", { spec: spec("silent-eu"), instance_id: "s1", heartbeat_interval_ms: 200 });
    expect(reg.body).toMatchObject({ revision: expect.any(Number) });
    await waitFor(() => eu.view.get("silent-eu")?.status === "deregistered", { timeoutMs: 10_000, message: "eu evicts its silent agent" });
    // The event is stored by the publisher after the view applied the eviction: wait for it.
    const evictions = async () =>
      (await readStoredEvents(inEu.nc, storeNames(euConfig).eventsStream)).filter((e) => e.event.type === "registry.agent.deregistered" && e.event.data.agent_type === "silent-eu");
    await waitFor(async () => (await evictions()).length > 0, { timeoutMs: 10_000, message: "eu stores the eviction event" });
    const evicted = await evictions();
    expect(evicted).toHaveLength(1);
    expect(evicted[0]!.event.data.reason).toBe("evicted");
    const usEvents = await readStoredEvents(inEu.nc, storeNames(usConfig).eventsStream);
    expect(usEvents.some((e) => e.event.data?.agent_type === "silent-eu")).toBe(false);
  });
});
