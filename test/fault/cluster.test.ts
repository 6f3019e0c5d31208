/**
 * A three-node NATS cluster with the bucket and the events stream at three replicas, the
 * registry connected to all three URLs, a fleet heartbeating (issue 6):
 *  1. the node leading the bucket's stream is killed with -9: writes and lookups go on after
 *     a gap that is measured (stream leader election on 2.9.10 takes seconds);
 *  2. it is restarted: its replica catches up with what was written meanwhile;
 *  3. the whole cluster is killed with -9 and restarted: the registry resumes its view from
 *     the store, every spec and instance is there, no live instance was evicted.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import { canControlNatsServers, withNatsCluster } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry } from "../harness/registry.js";
import { retryUntil, waitFor } from "../harness/wait.js";

const INTERVAL = 1000;
const TYPES = ["alpha", "beta", "gamma", "delta"];
const PER_TYPE = 5;

/** Successes and failures of a write (heartbeat request) and a lookup, every 50 ms. */
function probe(c: RawClient) {
  const log = { write: [] as Array<[number, boolean]>, lookup: [] as Array<[number, boolean]> };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const w = await c.request("heartbeat.probe.p1", {}, 2000).catch(() => null);
      log.write.push([Date.now(), w?.ok === true]);
      const l = await c.request("lookup", { capability: "alpha.run" }, 2000).catch(() => null);
      log.lookup.push([Date.now(), l?.ok === true && l.body.providers.length === 1]);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  /** Longest time without a success since `from`. */
  const gap = (kind: "write" | "lookup", from: number) => {
    let last = from;
    let longest = 0;
    for (const [at, ok] of log[kind]) {
      if (at < from || !ok) continue;
      longest = Math.max(longest, at - last);
      last = at;
    }
    return longest;
  };
  const okSince = (kind: "write" | "lookup", from: number) => log[kind].some(([at, ok]) => at > from && ok);
  return { gap, okSince, stop: async () => ((stopped = true), await loop) };
}

it.runIf(canControlNatsServers())("survives losing a node, and a restart of the whole cluster, with replicas 3", { timeout: 150_000 }, async () => {
  const t0 = Date.now();
  await using cluster = await withNatsCluster({ metaLeaderTimeoutMs: 45_000 });
  const url = cluster.urls.join(",");
  await using reg = await startRegistry(url, { replicas: 3, leaseMs: 1500 });
  const { prefix, bucket, eventsStream } = configOf(reg);
  const agents = await RawClient.connect(url, prefix);
  const c = await RawClient.connect(url, prefix);
  const figures: string[] = [`cluster and registry up in ${Date.now() - t0} ms`];
  let beat: NodeJS.Timeout | undefined;
  let p: ReturnType<typeof probe> | undefined;
  try {
    await waitFor(() => reg.isEvictor, { timeoutMs: 15_000, message: "evictor elected" });
    const register = (type: string, id: string, interval = INTERVAL) =>
      retryUntil(async () => {
        const r = await c.request(`register.${type}`, { spec: spec(type), instance_id: id, heartbeat_interval_ms: interval }, 3000);
        if (!r.ok) throw new Error(JSON.stringify(r.body));
        return r;
      }, { timeoutMs: 20_000, intervalMs: 200, message: `register ${type}/${id}` });
    for (const t of TYPES) for (let i = 0; i < PER_TYPE; i++) await register(t, `${t}-${i}`);
    await register("probe", "p1", 60_000);
    beat = setInterval(() => {
      for (const t of TYPES) for (let i = 0; i < PER_TYPE; i++) agents.nc.publish(`${prefix}.heartbeat.${t}.${t}-${i}`, "{}");
    }, INTERVAL / 4);
    p = probe(c);
    const jsm = await jetstreamManager(c.nc, { timeout: 3000 });
    const kvInfo = () => jsm.streams.info(`KV_${bucket}`);

    // 1. Kill the node leading the bucket's stream.
    const leader = (await retryUntil(kvInfo, { timeoutMs: 10_000 })).cluster?.leader;
    const victim = cluster.nodes.find((n) => n.url === cluster.urls[Number(/-(\d+)$/.exec(leader ?? "")?.[1] ?? 1) - 1])!;
    const killedAt = Date.now();
    await victim.kill();
    await waitFor(() => p!.okSince("write", killedAt + 500) && p!.okSince("lookup", killedAt + 500), { timeoutMs: 30_000, intervalMs: 100, message: "writes and lookups go on" });
    await new Promise((r) => setTimeout(r, 2000));
    figures.push(`node ${leader} (bucket stream leader) killed: longest gap ${p.gap("write", killedAt)} ms for writes, ${p.gap("lookup", killedAt)} ms for lookups`);

    // 2. Restart it: its replica catches up with what the heartbeats wrote meanwhile.
    const restartedAt = Date.now();
    await victim.restart();
    await cluster.waitForMetaLeader(45_000);
    await waitFor(async () => {
      const info = await kvInfo();
      const replica = info.cluster?.replicas?.find((r) => r.name === leader);
      return info.cluster?.leader === leader || (replica?.current === true && (replica.lag ?? 0) === 0);
    }, { timeoutMs: 30_000, intervalMs: 200, message: `${leader} catches up` });
    figures.push(`node ${leader} restarted: replica current again ${Date.now() - restartedAt} ms after the restart`);

    // 3. Kill all three, restart all three.
    const before = new Map<string, string[]>();
    for (const t of TYPES) before.set(t, (await c.request("get", { agent_type: t })).body.agent.instances.map((i: { instance_id: string }) => i.instance_id).sort());
    await Promise.all(cluster.nodes.map((n) => n.kill()));
    await new Promise((r) => setTimeout(r, 1000));
    const wholeRestartAt = Date.now();
    await Promise.all(cluster.nodes.map((n) => n.restart()));
    await cluster.waitForMetaLeader(45_000);
    const electedAfter = Date.now() - wholeRestartAt;
    await waitFor(() => p!.okSince("write", wholeRestartAt) && p!.okSince("lookup", wholeRestartAt), { timeoutMs: 45_000, intervalMs: 100, message: "registry answers after the cluster restart" });
    figures.push(`whole cluster killed and restarted: meta leader after ${electedAfter} ms, writes and lookups answered again ${Date.now() - wholeRestartAt} ms after the restart`);
    // The view follows the store again: a write made now is read back (min_revision waits up to 2 s).
    const fresh = await register("after-restart", "x", 60_000);
    const readBack = await retryUntil(async () => {
      const r = await c.request("lookup", { capability: "after-restart.run", min_revision: fresh.body.revision }, 5000);
      if (!r.ok) throw new Error(JSON.stringify(r.body));
      return r;
    }, { timeoutMs: 30_000, intervalMs: 200, message: "read your write after the cluster restart" });
    expect(readBack.body.providers).toHaveLength(1);
    figures.push(`a write made after the restart was read back ${Date.now() - wholeRestartAt} ms after the restart`);

    // Two eviction windows later: every spec and instance is there, nothing live was evicted.
    await new Promise((r) => setTimeout(r, 2 * 3 * INTERVAL));
    for (const t of TYPES) {
      const got = await c.request("get", { agent_type: t });
      expect(got.body.agent.version).toBe("1.0.0");
      expect(got.body.agent.instances.map((i: { instance_id: string }) => i.instance_id).sort()).toEqual(before.get(t));
      const look = await c.request("lookup", { capability: `${t}.run` });
      expect(look.body.providers[0].ready_instances).toBe(PER_TYPE);
    }
    expect(reg.view.revision).toBeGreaterThanOrEqual(fresh.body.revision);
    const events = await retryUntil(() => readStoredEvents(c.nc, eventsStream), { timeoutMs: 10_000 });
    expect(events.filter((e) => e.event.type === "registry.agent.deregistered")).toEqual([]);
    const ids = events.map((e) => e.event.id);
    expect(new Set(ids).size).toBe(ids.length);
    console.log(`cluster (3 nodes, nats-server 2.9.10, replicas 3, ${TYPES.length * PER_TYPE} instances at ${INTERVAL} ms):\n  ${figures.join("\n  ")}`);
  } catch (e) {
    const interesting = reg.logs.filter((l) => l.level >= 40 || /evict|reload|restart|lease/i.test(l.msg));
    console.log(`registry log (warnings and liveness):\n${interesting.map((l) => JSON.stringify(l)).join("\n")}`);
    throw e;
  } finally {
    if (beat) clearInterval(beat);
    await p?.stop();
    await agents.close();
    await c.close();
  }
});
