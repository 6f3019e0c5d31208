/**
 * A replica started while its three-node cluster is still forming (two nodes up, the third in
 * every route but not started). How the JetStream API refuses depends on the server: 2.9 elects
 * a meta leader with two nodes and refuses the replicas-3 bucket, "no suitable peers for
 * placement"; newer servers (2.15 here) elect none until every node of a first start has joined,
 * so the API says "JetStream system temporarily unavailable" or does not answer. Either way the
 * start waits, warning why, and /readyz says so; once the third node joins, the stores open
 * with three replicas and the registry serves. Before, the start failed at the first refusal:
 * under an orchestrator, a crash loop until the cluster had formed.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { expect, it } from "vitest";
import semver from "semver";
import { natsServerVersion } from "../../src/adapters/nats/nats-server-process.js";
import { createRegistry } from "../../src/index.js";
import { canControlNatsServers, withNatsCluster } from "../harness/nats.js";
import { RawClient, captureLogs, spec, testConfig } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

/** The reasons untilPlaced gives for a cluster that is still forming, one per server behaviour. */
const FORMING = /no suitable peers|electing its JetStream leader|no JetStream leader yet/;

it.runIf(canControlNatsServers())("waits for a forming cluster to place its replicas-3 stores, then serves", { timeout: 120_000 }, async () => {
  await using cluster = await withNatsCluster({ startNow: 2 });
  // 2.9 elects with two of three nodes: wait for it, so that the refusal seen is the placement's.
  const quorumElects = semver.lt(semver.coerce((await natsServerVersion()) ?? "0.0.0") ?? "0.0.0", "2.10.0");
  if (quorumElects) await cluster.waitForMetaLeader(45_000);
  const url = cluster.urls.join(",");
  const config = testConfig(url, { replicas: 3 });
  const { logger, lines } = captureLogs();
  const registry = createRegistry({ config, logger });
  const starting = registry.start();
  let startFailed: unknown = null;
  starting.catch((e: unknown) => (startFailed = e));
  try {
    const waiting = () => lines.find((l) => l.msg.startsWith(`cannot open the KV bucket ${config.bucket} yet`));
    await waitFor(() => waiting() !== undefined || startFailed !== null, { timeoutMs: 30_000, message: "the start waiting for placement" });
    expect(startFailed).toBeNull();
    expect(waiting()!.level).toBe(40);
    const reason = String(waiting()!["reason"]);
    expect(reason).toMatch(quorumElects ? /no suitable peers/ : FORMING);
    const health = registry.health();
    expect(health.ready).toBe(false);
    expect(health.checks["store"]?.detail).toMatch(new RegExp(`^waiting: .*(${FORMING.source})`));

    const joinAt = Date.now();
    await cluster.startRemaining();
    const joined = Date.now() - joinAt;
    await starting;
    const readyAfter = Date.now() - joinAt;
    expect(registry.health().ready).toBe(true);
    expect(lines.some((l) => l.msg === `opened the KV bucket ${config.bucket} after waiting for the JetStream cluster`)).toBe(true);

    const c = await RawClient.connect(cluster.urls.join(","), config.prefix);
    try {
      const r = await c.request("register.alpha", { spec: spec("alpha"), instance_id: "a-1", heartbeat_interval_ms: 10_000 }, 10_000);
      expect(r.ok, JSON.stringify(r.body)).toBe(true);
      const jsm = await jetstreamManager(c.nc, { timeout: 5000 });
      expect((await jsm.streams.info(`KV_${config.bucket}`)).config.num_replicas).toBe(3);
      expect((await jsm.streams.info(config.eventsStream)).config.num_replicas).toBe(3);
      const attempts = lines.filter((l) => l.msg.startsWith("cannot open the")).length;
      console.log(`cluster forming (nats-server ${c.nc.info?.version}, replicas 3): ${attempts} refused opens before the third node (first: ${reason}); it saw the meta leader ${joined} ms after it was started, the registry was ready ${readyAfter} ms after`);
    } finally {
      await c.close();
    }
  } finally {
    await registry.stop("test over");
    await starting.catch(() => undefined);
  }
});
