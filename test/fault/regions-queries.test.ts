/**
 * `lookup`, `discover`, `find`, `search` and `route` across regions (docs/protocol.md section 8, v1.2): a coordinator in one
 * region finds the agents of every region, each named with its `region`, its own region's first
 * by default (`prefer_local`), only its own with `local`, all in one order with `global`; a
 * region cut off is still listed, its entries marked `stale`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { RawClient, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const CAPABILITY = "text.translate";
const provider = (agentType: string, confidence: number) =>
  spec(agentType, { capabilities: [{ name: CAPABILITY, description: `translates (${agentType})`, input_schema: { type: "object" }, output_schema: {}, confidence_hint: confidence }] });

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: queries across regions", () => {
  let sc: SuperclusterHandle;
  let eu: TestRegistry;
  let us: TestRegistry;
  let inEu: RawClient;
  let inUs: RawClient;
  const names = (reply: { body: { providers: Array<{ agent_type: string; region: string; stale?: boolean }> } }) =>
    reply.body.providers.map((p) => `${p.agent_type}@${p.region}${p.stale === true ? " (stale)" : ""}`);

  beforeAll(async () => {
    sc = await startSupercluster({ regions: ["eu", "us"] });
    const config = testConfig(sc.regions.eu!.url, { region: "eu", regions: ["eu", "us"], replicaName: "eu-1", remoteStaleMs: 2_000 });
    [eu, us] = await Promise.all([
      startRegistry(config.natsUrl, {}, config),
      startRegistry(sc.regions.us!.url, {}, { ...config, natsUrl: sc.regions.us!.url, region: "us", replicaName: "us-1" }),
    ]);
    inEu = await RawClient.connect(sc.regions.eu!.url, config.prefix);
    inUs = await RawClient.connect(sc.regions.us!.url, config.prefix);
    // The eu provider is the more confident one: first in a global order, second in us's preferred one.
    expect((await inEu.request("register.tr-eu", { spec: provider("tr-eu", 0.9), instance_id: "e1" })).ok).toBe(true);
    expect((await inUs.request("register.tr-us", { spec: provider("tr-us", 0.5), instance_id: "u1" })).ok).toBe(true);
    expect((await inEu.request("register.only-eu", { spec: spec("only-eu"), instance_id: "o1" })).ok).toBe(true);
    await waitFor(() => us.remoteRegions[0]?.view.get("only-eu") !== undefined && us.remoteRegions[0]?.view.get("tr-eu") !== undefined && eu.remoteRegions[0]?.view.get("tr-us") !== undefined, {
      timeoutMs: 15_000,
      message: "each region follows the other's registrations",
    });
  });
  afterAll(async () => {
    await Promise.all([inEu?.close(), inUs?.close()].map((p) => p?.catch(() => undefined)));
    await Promise.all([eu?.stop("test over"), us?.stop("test over")]);
    await sc?.stop();
  });

  it("a coordinator in us finds an agent registered in eu, named with its region", async () => {
    const r = await inUs.request("lookup", { capability: "only-eu.run" });
    expect(r.ok).toBe(true);
    expect(r.body.providers).toHaveLength(1);
    expect(r.body.providers[0]).toMatchObject({ agent_type: "only-eu", region: "eu", status: "ready", ready_instances: 1 });
    expect(r.body.providers[0].stale).toBeUndefined();
  });

  it("orders by scope: prefer_local by default, local, global", async () => {
    expect(names(await inUs.request("lookup", { capability: CAPABILITY }))).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect(names(await inUs.request("lookup", { capability: CAPABILITY, scope: "prefer_local" }))).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect(names(await inUs.request("lookup", { capability: CAPABILITY, scope: "local" }))).toEqual(["tr-us@us"]);
    expect(names(await inUs.request("lookup", { capability: CAPABILITY, scope: "global" }))).toEqual(["tr-eu@eu", "tr-us@us"]);
    expect(names(await inEu.request("lookup", { capability: CAPABILITY }))).toEqual(["tr-eu@eu", "tr-us@us"]);
    // Pages run through the regions in the same order.
    const first = await inUs.request("lookup", { capability: CAPABILITY, limit: 1 });
    expect(names(first)).toEqual(["tr-us@us"]);
    expect(names(await inUs.request("lookup", { capability: CAPABILITY, limit: 1, cursor: first.body.next_cursor }))).toEqual(["tr-eu@eu"]);
  });

  it("discover lists every region's agents by scope, paged by position", async () => {
    const ids = (reply: { body: { agents: Array<{ id: string; region: string }> } }) => reply.body.agents.map((a) => `${a.id}@${a.region}`);
    expect(ids(await inUs.request("discover", { capability: CAPABILITY }))).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect(ids(await inUs.request("discover", { capability: CAPABILITY, scope: "local" }))).toEqual(["tr-us@us"]);
    expect(ids(await inUs.request("discover", { capability: CAPABILITY, scope: "global" }))).toEqual(["tr-eu@eu", "tr-us@us"]);
    const all = ids(await inUs.request("discover", {}));
    expect(all.slice(0, 1)).toEqual(["tr-us@us"]);
    expect(all.slice(1).sort()).toEqual(["only-eu@eu", "tr-eu@eu"]);
    const first = await inUs.request("discover", { limit: 2 });
    const rest = await inUs.request("discover", { limit: 2, cursor: first.body.next_cursor });
    expect([...ids(first), ...ids(rest)]).toEqual(all);
  });

  it("find lists every region's agents by scope, each with its region", async () => {
    const ids = (reply: { body: { agents: Array<{ agent_type: string; region: string }> } }) => reply.body.agents.map((a) => `${a.agent_type}@${a.region}`);
    expect(ids(await inUs.request("find", { skill: CAPABILITY }))).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect(ids(await inUs.request("find", { skill: CAPABILITY, scope: "local" }))).toEqual(["tr-us@us"]);
    expect(ids(await inUs.request("find", { skill: CAPABILITY, scope: "global" }))).toEqual(["tr-eu@eu", "tr-us@us"]);
    const first = await inUs.request("find", { skill: CAPABILITY, limit: 1 });
    expect(ids(first)).toEqual(["tr-us@us"]);
    expect(ids(await inUs.request("find", { skill: CAPABILITY, limit: 1, cursor: first.body.next_cursor }))).toEqual(["tr-eu@eu"]);
    const onlyEu = await inUs.request("find", { name: "only-eu" });
    expect(onlyEu.body.agents[0]).toMatchObject({ agent_type: "only-eu", region: "eu" });
  });

  it("route prefers this region's agent, goes global on request, and reaches another region when this one has none", async () => {
    const local = await inUs.request("route", { skill: CAPABILITY });
    expect(local.body).toMatchObject({ agent_type: "tr-us", region: "us" });
    expect(local.body.candidates.map((c: { agent_type: string; region: string }) => `${c.agent_type}@${c.region}`)).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect((await inUs.request("route", { skill: CAPABILITY, scope: "local" })).body.candidates).toHaveLength(1);
    // Equal scores (skill only, weight 1): global order is registration order, and eu's came first.
    const global = await inUs.request("route", { skill: CAPABILITY, scope: "global" });
    expect(global.body.candidates).toHaveLength(2);
    const remoteOnly = await inUs.request("route", { skill: "only-eu.run" });
    expect(remoteOnly.body).toMatchObject({ agent_type: "only-eu", region: "eu", nats_subject: "agent.tasks.only-eu" });
    const none = await inUs.request("route", { skill: "only-eu.run", scope: "local" });
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe("no_route");
  });

  it("search ranks every region's capabilities, this region's first by default", async () => {
    const hits = (reply: { body: { results: Array<{ agent_type: string; region: string }> } }) => reply.body.results.map((r) => `${r.agent_type}@${r.region}`);
    expect(hits(await inUs.request("search", { query: "translates" }))).toEqual(["tr-us@us", "tr-eu@eu"]);
    expect(hits(await inUs.request("search", { query: "translates", scope: "local" }))).toEqual(["tr-us@us"]);
    expect(hits(await inUs.request("search", { query: "translates", limit: 1 }))).toEqual(["tr-us@us"]);
    expect(hits(await inEu.request("search", { query: "translates" }))).toEqual(["tr-eu@eu", "tr-us@us"]);
  });

  it("refuses an unknown scope", async () => {
    for (const op of ["lookup", "discover", "route", "search"]) {
      const r = await inUs.request(op, { ...(op === "search" ? { query: "x" } : op === "route" ? { skill: CAPABILITY } : { capability: CAPABILITY }), scope: "everywhere" });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe("invalid_request");
    }
  });

  it("lists a cut-off region's providers marked stale, and unmarks them after the heal", async () => {
    sc.isolate("eu");
    try {
      await waitFor(async () => names(await inUs.request("lookup", { capability: CAPABILITY })).includes("tr-eu@eu (stale)"), {
        timeoutMs: 15_000,
        message: "us lists eu's provider as stale",
      });
      expect(names(await inUs.request("lookup", { capability: CAPABILITY }))).toEqual(["tr-us@us", "tr-eu@eu (stale)"]);
    } finally {
      await sc.heal("eu");
    }
    await waitFor(async () => names(await inUs.request("lookup", { capability: CAPABILITY })).includes("tr-eu@eu"), { timeoutMs: 20_000, message: "the stale mark clears" });
  });
});
