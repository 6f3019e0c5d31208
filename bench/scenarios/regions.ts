/**
 * Regions (issue 43): one registry across a loopback supercluster of two regions, eu and us,
 * each a nats-server cluster of its own joined by gateways, each with its own replica in
 * regional mode (bench/lib/region-stack.ts).
 *
 * Propagation: a registration acknowledged in eu, timed until us's registry lists it in a
 * `lookup` with scope global. That is the question a coordinator in us asks, and the registry
 * answers it from its view of eu (the local KV mirror of eu's bucket, fed to a read-only view),
 * so the lookup shows the registration exactly when it has "appeared in us's view"; a watch of
 * the mirror would stop one step short of the view. Beside it, in the same run and interleaved
 * sample by sample, the bare floor: a JetStream stream placed in eu mirrored into us (set up as
 * the registry's bucket mirror is), a publish acknowledged in eu timed until us's mirror returns
 * it. Both are polled the same way, back-to-back requests to us, and reported as a ratio.
 *
 * Convergence: both regions hold a fleet (seeded into their buckets as fleet-1m does) and keep
 * heartbeating it; the WAN link is cut for 60 s by the gateway proxies, during which each
 * region registers new instances of its own, then a marker agent last of all. After the heal,
 * a region's view of the other has converged when it lists the other's marker unmarked stale:
 * the view applies the mirror in the home bucket's order, so the marker's presence means every
 * write the other region made during the partition has been applied, and the cleared stale
 * mark means the mirror hears from it again. The bucket mirrors catching up (their last
 * sequence reaching the home bucket's at the heal) is the NATS floor beside it.
 */
import semver from "semver";
import { REGIONS_MIN_SERVER_VERSION } from "../../src/adapters/nats/region-streams.js";
import { mirrorBucket } from "../../src/adapters/nats/region-mirror.js";
import { regionBucket } from "../../src/config/region.js";
import { natsVersion, sleep } from "../lib/processes.js";
import { withRegions, type RegionSite, type RegionsStack } from "../lib/region-stack.js";
import { fmt, ratio, type Context, type Row, type Scenario, type ScenarioResult } from "../lib/scenario.js";
import type { FleetShape } from "../lib/specs.js";
import type { Summary } from "../lib/stats.js";
import { metricValue } from "../lib/stack.js";

const NAMES = ["eu", "us"] as const;
const BUCKET = "agent-registry";
/** A first mirror of a bucket made before its source existed waits for the server's retry (up to 2 minutes). */
const FOLLOW_TIMEOUT_MS = 180_000;
const PARTITION_MS = 60_000;

type Params = { count: number; shape: FleetShape; instancesPerType: number; intervalMs: number; partitionMs: number; churnPerSec: number; env: Record<string, string> };
type Propagation = { count: number; missing: { registry: number; bare: number }; registryMs: Summary; bareMs: Summary; registryAckMs: Summary; bareAckMs: Summary };
type Window = { sent: number; answered: number; errors: number; firstError?: string };
type Seen = { present: boolean; stale: boolean };

function params(quick: boolean): Params {
  // BENCH_REGIONS_INSTANCES sets the instances per region when a full run has less room than 100,000 need.
  const instances = quick ? 1_000 : Number(process.env["BENCH_REGIONS_INSTANCES"] ?? 100_000);
  const instancesPerType = 10;
  return {
    count: quick ? 30 : 500,
    shape: { types: Math.max(1, Math.round(instances / instancesPerType)), capsPerType: 4, providersPerCap: 3 },
    instancesPerType,
    intervalMs: quick ? 1_000 : 30_000,
    // BENCH_REGIONS_PARTITION_MS tries another partition length (convergence waits on the server's retry schedule).
    partitionMs: Number(process.env["BENCH_REGIONS_PARTITION_MS"] ?? (quick ? 8_000 : PARTITION_MS)),
    churnPerSec: 20,
    // fleet-1m's settings for large fleets (heartbeats held in memory); quick runs shorten the bounds.
    env: { REGISTRY_LIVENESS: "memory", REGISTRY_TENANT_MAX_BYTES: "0", ...(quick ? { REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "100", REGISTRY_REMOTE_STALE_MS: "2000" } : {}) },
  };
}

const homeStream = (region: string): string => `KV_${regionBucket(BUCKET, region)}`;
/** The stream in `at` that mirrors `home`'s bucket. */
const mirrorStream = (home: string, at: string): string => `KV_${mirrorBucket(regionBucket(BUCKET, home), at)}`;

/** Registers `agentType` in `site`'s region and waits until the other region's registry lists it. */
async function crossesOver(ctx: Context, site: RegionSite, agentType: string, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  await site.load.call("regionsRegister", { agentType });
  const at = await site.load.call<number | null>("regionsVisible", { agentType, region: site.name, fresh: true, timeoutMs });
  ctx.check(at !== null, `${agentType}, registered in ${site.name}, did not reach the other region's view within ${timeoutMs} ms`);
  return at! - t0;
}

/** Registration in eu to us's view, beside the bare stream mirror, on idle replicas. */
async function propagation(ctx: Context, stack: RegionsStack, p: Params): Promise<{ result: Propagation; firstFollowMs: number[] }> {
  const [eu, us] = stack.sites;
  const regs = await Promise.all(stack.sites.map((s) => stack.registry(s, p.env)));
  // The first crossing waits for the mirrors to find their sources; it is set-up, not a sample.
  const firstFollowMs = await Promise.all([crossesOver(ctx, eu, "xr-first-eu", FOLLOW_TIMEOUT_MS), crossesOver(ctx, us, "xr-first-us", FOLLOW_TIMEOUT_MS)]);
  ctx.log(`each region follows the other (first crossing ${firstFollowMs.map((ms) => fmt(ms)).join(" ms, ")} ms); bare stream and mirror next`);
  await eu.load.call("regionsBareStreams", { home: eu.name, peer: us.name });
  await eu.load.call("regionsPropagation", { count: 5, region: eu.name, round: "warm" });
  const result = await eu.load.call<Propagation>("regionsPropagation", { count: p.count, region: eu.name, round: "m" });
  ctx.check(result.registryMs.count > 0 && result.bareMs.count > 0, `no propagation sample arrived (missing: ${JSON.stringify(result.missing)})`);
  ctx.log(`propagation eu -> us: registry p50 ${result.registryMs.p50} ms p99 ${result.registryMs.p99} ms; bare mirror p50 ${result.bareMs.p50} ms p99 ${result.bareMs.p99} ms`);
  for (const r of regs) await r.stop();
  return { result, firstFollowMs };
}

/** Both buckets filled with a fleet, both mirrors caught up with them, replicas started on them and heartbeating. */
async function fleets(ctx: Context, stack: RegionsStack, p: Params): Promise<{ regs: Awaited<ReturnType<RegionsStack["registry"]>>[]; seedSeconds: number[] }> {
  const { shape, instancesPerType, intervalMs } = p;
  const seeded = await Promise.all(stack.sites.map((s) => s.load.call<{ seconds: number }>("seedBucket", { bucket: regionBucket(BUCKET, s.name), shape, instancesPerType, intervalMs })));
  await Promise.all(
    stack.sites.map(async (s, i) => {
      const other = stack.sites[1 - i]!.name;
      const target = await s.load.call<number>("regionsStreamSeq", { stream: homeStream(s.name) });
      const at = await s.load.call<number | null>("regionsPeerStreamReaches", { stream: mirrorStream(s.name, other), target, timeoutMs: 600_000, intervalMs: 200 });
      ctx.check(at !== null, `the mirror of ${s.name}'s bucket in ${other} did not catch up with ${fmt(target)} messages`);
    }),
  );
  ctx.log(`buckets seeded (${seeded.map((s) => `${s.seconds} s`).join(", ")}) and mirrored; replicas start on them`);
  const regs = await Promise.all(stack.sites.map((s) => stack.registry(s, p.env, 600_000)));
  for (const s of stack.sites) {
    await s.load.call("fleet", { shape, instancesPerType, intervalMs });
    await s.load.call("assumeRegistered");
    await s.load.call("startHeartbeats");
  }
  await Promise.all(stack.sites.map((s) => crossesOver(ctx, s, `xr-loaded-${s.name}`, FOLLOW_TIMEOUT_MS)));
  return { regs, seedSeconds: seeded.map((s) => s.seconds) };
}

type PartitionResult = {
  convergeMs: number[];
  mirrorsMs: number[];
  gatewaysMs: number;
  backlog: number[];
  staleDuring: Seen[];
  churn: Array<{ sent: number; errors: number; firstError?: string }>;
  heartbeats: Window[];
  evictions: number;
  seedSeconds: number[];
};

/** Cuts the WAN for the partition, both regions working on, then heals it and times each view's convergence. */
async function partition(ctx: Context, stack: RegionsStack, p: Params): Promise<PartitionResult> {
  const { regs, seedSeconds } = await fleets(ctx, stack, p);
  await sleep(p.intervalMs);
  for (const s of stack.sites) await s.load.call("beginWindow");
  stack.sc.isolate(NAMES[0]);
  const cutAt = Date.now();
  ctx.log(`fleets heartbeating; WAN cut for ${p.partitionMs / 1000} s`);
  const churn = await Promise.all(stack.sites.map((s) => s.load.call<PartitionResult["churn"][number]>("regionsChurn", { ratePerSec: p.churnPerSec, durationMs: p.partitionMs - (p.intervalMs > 1000 ? 10_000 : 2_000), round: "part" })));
  // Proof the link was cut: each region's earlier probe of the other is listed, marked stale.
  const staleDuring = await Promise.all(stack.sites.map((s) => s.load.call<Seen>("regionsSeen", { agentType: `xr-loaded-${s.name}`, region: s.name })));
  for (const s of stack.sites) await s.load.call("regionsRegister", { agentType: `xr-healed-${s.name}` });
  const targets = await Promise.all(stack.sites.map((s) => s.load.call<number>("regionsStreamSeq", { stream: homeStream(s.name) })));
  const behind = await Promise.all(stack.sites.map((s, i) => s.load.call<number>("regionsStreamSeq", { stream: mirrorStream(s.name, stack.sites[1 - i]!.name), where: "peer" })));
  await sleep(Math.max(0, cutAt + p.partitionMs - Date.now()));
  const timeoutMs = 600_000;
  const views = stack.sites.map((s) => s.load.call<number | null>("regionsVisible", { agentType: `xr-healed-${s.name}`, region: s.name, fresh: true, timeoutMs }));
  const mirrors = stack.sites.map((s, i) => s.load.call<number | null>("regionsPeerStreamReaches", { stream: mirrorStream(s.name, stack.sites[1 - i]!.name), target: targets[i]!, timeoutMs }));
  const healAt = Date.now();
  await stack.sc.heal(NAMES[0]);
  const gatewaysMs = Date.now() - healAt;
  const [seen, caught] = [await Promise.all(views), await Promise.all(mirrors)];
  ctx.check(seen.every((t) => t !== null), "a region's view did not converge within 10 minutes of the heal");
  // The views agree on what each region wrote during the partition: its agents' instance counts.
  const churnTypes = Array.from({ length: 10 }, (_, k) => `xr-churn-${k}`);
  const differ = await Promise.all(stack.sites.map((s) => s.load.call<unknown[]>("regionsCompare", { agentTypes: churnTypes, region: s.name })));
  ctx.check(differ.every((d) => d.length === 0), `after converging, a region's view of the other differs from the other's own: ${JSON.stringify(differ)}`);
  const heartbeats = await Promise.all(stack.sites.map((s) => s.load.call<Window>("endWindow")));
  for (const s of stack.sites) await s.load.call("stopHeartbeats");
  const evictions = (await Promise.all(regs.map((r) => r.metrics()))).reduce((sum, m) => sum + metricValue(m, "agent_registry_evictions_total"), 0);
  return {
    convergeMs: seen.map((t) => t! - healAt),
    mirrorsMs: caught.map((t) => (t === null ? Number.NaN : t - healAt)),
    gatewaysMs,
    backlog: targets.map((t, i) => t - behind[i]!),
    staleDuring,
    churn,
    heartbeats,
    evictions,
    seedSeconds,
  };
}

function propagationRows(r: Propagation): Row[] {
  const row = (q: "p50" | "p99"): Row => ({
    measure: `cross-region propagation, registration in eu to us's view (lookup, scope global), ${q}`,
    figure: `${r.registryMs[q].toFixed(2)} ms (${ratio(r.registryMs[q] / r.bareMs[q])} baseline)`,
    baseline: `bare stream mirrored eu -> us, publish ack to readable in us: ${q} ${r.bareMs[q].toFixed(2)} ms`,
    target: "reported",
    pass: null,
  });
  return [row("p50"), row("p99")];
}

function partitionRows(r: PartitionResult, p: Params): Row[] {
  const size = p.shape.types * p.instancesPerType;
  const worst = Math.max(...r.convergeMs);
  const answered = r.heartbeats.reduce((s, h) => s + h.answered, 0);
  return [
    {
      measure: `convergence after a ${p.partitionMs / 1000} s partition, ${fmt(size)} instances per region`,
      figure: `${fmt(worst / 1000, 1)} s (eu's view of us ${fmt(r.convergeMs[1]! / 1000, 1)} s, us's of eu ${fmt(r.convergeMs[0]! / 1000, 1)} s)`,
      baseline: `bucket mirrors caught up in ${r.mirrorsMs.map((ms) => `${fmt(ms / 1000, 1)} s`).join(" and ")}; gateways passing messages again in ${fmt(r.gatewaysMs / 1000, 1)} s`,
      target: "reported",
      pass: null,
    },
    {
      measure: "false evictions through the partition (both fleets heartbeating)",
      figure: fmt(r.evictions),
      baseline: `${fmt(answered)} heartbeats answered in the two regions over the partition`,
      target: "0",
      pass: r.evictions === 0 && r.heartbeats.every((h) => h.errors === 0),
    },
  ];
}

export const regionsScenario: Scenario = {
  name: "regions",
  title: "Regions: propagation across a supercluster and convergence after a partition",
  aliases: ["supercluster", "partition"],
  method:
    "A loopback supercluster of two regions, eu and us (one nats-server each, joined by gateways; every gateway link passes a TCP proxy " +
    "of the test harness in the bench process, which cuts it for a partition), a registry replica per region in regional mode " +
    "(REGISTRY_LIVENESS=memory as for large fleets) and a load process per region with a second connection to the other. " +
    "Propagation: 500 registrations of new agent types, one at a time, each timed from its reply in eu until us's registry lists it " +
    "in a lookup with scope global (polled back-to-back); interleaved with them, 500 publishes of the same bytes to a bare stream " +
    "in eu mirrored into us (file storage, R1, as the registry's bucket mirror), each timed from its ack until us's mirror returns it " +
    "(direct message get by subject, polled back-to-back); the ratio is registry / bare at p50 and p99. Convergence: 100,000 " +
    "instances (10,000 agent types) per region written into each region's bucket, the mirrors caught up, replicas started on them, " +
    "every instance heartbeating every 30 s in its region; after one interval the gateway proxies cut the WAN for 60 s, during which " +
    "each region registers 20 new instances a second and, last, a marker agent. From the heal, each region's view of the other has " +
    "converged when its lookup (scope global) lists the other's marker unmarked stale; the figure is the later of the two. The bucket " +
    "mirrors reaching the home buckets' last sequence at the heal are the floor beside it. Once converged, each region's own lookup " +
    "and the other region's global one must give the same ready instances for every agent type registered during the partition.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const version = await natsVersion();
    const plain = semver.coerce(version)?.version;
    if (plain === undefined || semver.lt(plain, REGIONS_MIN_SERVER_VERSION)) {
      const line = `skipped: the nats-server on PATH is ${version}; regional mode needs ${REGIONS_MIN_SERVER_VERSION} or newer (put one on PATH or set NATS_SERVER_BIN)`;
      ctx.log(line);
      return { rows: [], skipped: line, details: { natsServer: version } };
    }
    const p = params(ctx.quick);
    return withRegions(ctx, NAMES, async (stack) => {
      const prop = await propagation(ctx, stack, p);
      const part = await partition(ctx, stack, p);
      ctx.log(`converged in ${part.convergeMs.map((ms) => fmt(ms)).join(" ms and ")} ms after the heal; mirrors in ${part.mirrorsMs.map((ms) => fmt(ms)).join(" ms and ")} ms`);
      ctx.check(part.staleDuring.every((s) => s.present && s.stale), `the partition did not show: each region should list the other's agents as stale (${JSON.stringify(part.staleDuring)})`);
      ctx.check(part.churn.every((c) => c.errors === 0), `registrations during the partition failed: ${part.churn.map((c) => c.firstError).join("; ")}`);
      return {
        rows: [...propagationRows(prop.result), ...partitionRows(part, p)],
        notes: [
          `nats-server ${version}; ${fmt(p.shape.types * p.instancesPerType)} instances per region${ctx.quick ? " (quick mode: a small fleet, a short partition and a 2 s stale bound)" : ""}`,
          `propagation over ${fmt(prop.result.count)} pairs (missing: registry ${prop.result.missing.registry}, bare ${prop.result.missing.bare}): registry p50 ${prop.result.registryMs.p50} ms, p90 ${prop.result.registryMs.p90} ms, p99 ${prop.result.registryMs.p99} ms, max ${prop.result.registryMs.max} ms; bare mirror p50 ${prop.result.bareMs.p50} ms, p90 ${prop.result.bareMs.p90} ms, p99 ${prop.result.bareMs.p99} ms, max ${prop.result.bareMs.max} ms`,
          `the acknowledgements the samples start from: registration reply p50 ${prop.result.registryAckMs.p50} ms (p99 ${prop.result.registryAckMs.p99} ms), bare publish ack p50 ${prop.result.bareAckMs.p50} ms (p99 ${prop.result.bareAckMs.p99} ms)`,
          `set-up: the first crossing of each region's mirror took ${prop.firstFollowMs.map((ms) => `${fmt(ms)} ms`).join(" and ")} (a mirror made before its source waits for the server's retry); seeding the buckets ${part.seedSeconds.map((s) => `${s} s`).join(" and ")}`,
          `during the partition: ${part.churn.map((c, i) => `${NAMES[i]} registered ${fmt(c.sent)} instances`).join(", ")}; each listed the other's agents stale; at the heal the mirrors were ${part.backlog.map((b) => fmt(b)).join(" and ")} messages behind (eu's bucket in us, us's in eu)`,
          "after converging, each region's own lookup and the other's global one gave the same ready instances for each of the 10 agent types registered during the partition",
          `heartbeats over the partition: ${part.heartbeats.map((h, i) => `${NAMES[i]} ${fmt(h.answered)} of ${fmt(h.sent)} answered, ${h.errors} errors`).join("; ")}`,
        ],
        details: { natsServer: version, params: p, propagation: prop, partition: part },
      };
    });
  },
};
