/**
 * Side by side with etcd (issue 42): the same job, instances kept alive every 30 s, a watcher
 * told of every registration and every removal, done by etcd (leases with a key attached,
 * renewed on the v3 keepalive stream) and by this registry, one after the other on the same
 * machine, by one Go load generator with a driver for each (bench/peers). N ramps through
 * 10,000 to 1,000,000; a system's ramp stops at the first size where a renewal failed.
 *
 * Each step starts its system fresh (etcd with an empty data dir; a nats-server with an empty
 * JetStream store and a registry replica). The servers are pinned to CPU 0 and the load
 * generator to CPU 1, so both systems get the same core; server CPU and RSS are read from /proc:
 * etcd's one process, the registry's two (the replica and its nats-server, summed).
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pickFreePort } from "../../test/harness/ports.js";
import { goBuild } from "../lib/go-build.js";
import { cpuSeconds, mb, rssBytes } from "../lib/proc.js";
import { ROOT, sleep, startRegistry, startServer } from "../lib/processes.js";
import { fmt, ratio, type Context, type Row, type Scenario, type ScenarioResult } from "../lib/scenario.js";

const FULL_SIZES = [10_000, 30_000, 100_000, 300_000, 1_000_000];
/** The registry's own settings for a large fleet, as fleet-1m runs it (docs/performance.md). */
const REGISTRY_ENV = { REGISTRY_LIVENESS: "memory", REGISTRY_TENANT_MAX_BYTES: "0" };
/**
 * etcd's documented settings for a large keyspace: the backend quota raised to the 8 GB its
 * docs give as the suggested maximum (the 2 GB default is a safety net, not a capacity); every
 * other flag is its default, as the registry runs on its defaults but for REGISTRY_ENV.
 */
const ETCD_FLAGS = ["--quota-backend-bytes=8589934592"];
const SERVER_CPU = "0";
const LOAD_CPU = "1";

type Summary = { count: number; p50: number; p99: number; max: number };
type StepResult = {
  system: string;
  n: number;
  register_s: number;
  register_errors: number;
  register_first_error?: string;
  watch_ms: Summary;
  registrations_seen: number;
  window_s: number;
  window_renewals: number;
  window_rate: number;
  renew_ms: Summary;
  sent: number;
  answered: number;
  failed: number;
  lost: number;
  first_failure?: string;
  all_renewed: boolean;
  stopped: number;
  stopped_removed: number;
  false_removals: number;
  removal_ms: Summary;
  lateness_ms: Summary;
};
type Step = StepResult & { serverCpuSeconds: number; cpuPerRenewalUs: number; peakRssMb: number; windowRssMb: number; loadAverage: number };
type Servers = { pids: number[]; describe: string; stop(): Promise<void> };

/** Whether this machine can give the servers and the load generator a core each. */
function canPin(): boolean {
  return spawnSync("taskset", ["-c", "0", "true"]).status === 0 && (spawnSync("nproc").stdout?.toString().trim() ?? "1") !== "1";
}

/** Pins every thread of a running process (and those it starts later) to the servers' core. */
function pin(pid: number): void {
  spawnSync("taskset", ["-a", "-c", "-p", SERVER_CPU, String(pid)], { stdio: "ignore" });
}

function sumRss(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += rssBytes(pid);
    } catch {
      // ended
    }
  }
  return total;
}

async function startEtcd(binary: string, pinned: boolean): Promise<Servers> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-etcd-"));
  const client = `http://127.0.0.1:${await pickFreePort()}`;
  const peer = `http://127.0.0.1:${await pickFreePort()}`;
  const args = ["--name", "bench", "--data-dir", dataDir, "--listen-client-urls", client, "--advertise-client-urls", client, "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", `bench=${peer}`, "--log-level", "warn", ...ETCD_FLAGS];
  const child = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  const logs: string[] = [];
  child.stderr.on("data", (b: Buffer) => logs.push(...b.toString().split("\n").filter(Boolean)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (pinned) pin(child.pid!);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(10_000).then(() => child.kill("SIGKILL"))]);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`${client}/health`).then((r) => r.ok, () => false);
    if (ok) return { pids: [child.pid!], describe: client, stop };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  await stop();
  throw new Error(`etcd did not become healthy:\n${logs.slice(-20).join("\n")}`);
}

async function startRegistryStack(ctx: Context, pinned: boolean): Promise<Servers> {
  const server = await startServer();
  const env: Record<string, string> = { ...REGISTRY_ENV, ...(ctx.quick ? { REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "100" } : {}) };
  try {
    const registry = await startRegistry({ natsUrl: server.url, env, name: "bench-peers", nodeArgs: ctx.nodeFlags });
    try {
      await registry.waitReady();
    } catch (e) {
      await registry.stop();
      throw e;
    }
    if (pinned) for (const pid of [server.pid, registry.pid]) pin(pid);
    return {
      pids: [registry.pid, server.pid],
      describe: server.url,
      async stop() {
        await registry.stop();
        await server.stop();
      },
    };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

/** One step: a fresh system, the load generator's run against it, the servers' CPU and RSS. */
async function step(ctx: Context, peers: string, etcd: string, system: "etcd" | "registry", n: number, pinned: boolean): Promise<Step> {
  const servers = system === "etcd" ? await startEtcd(etcd, pinned) : await startRegistryStack(ctx, pinned);
  try {
    const timing = ctx.quick ? ["-interval", "1s", "-warmup", "1s", "-hold", "2s", "-removal-grace", "3s"] : ["-interval", "30s", "-warmup", "5s", "-hold", "30s", "-removal-grace", "30s"];
    const args = ["-system", system, "-endpoint", servers.describe, "-n", String(n), ...timing];
    const child = pinned ? spawn("taskset", ["-c", LOAD_CPU, peers, ...args], { stdio: ["ignore", "pipe", "pipe"] }) : spawn(peers, args, { stdio: ["ignore", "pipe", "pipe"] });
    const stderr: string[] = [];
    child.stderr.on("data", (b: Buffer) => stderr.push(b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, sumRss(servers.pids))), 500);
    let cpuAtOpen: number | null = null;
    let serverCpuSeconds = 0;
    let windowRss = 0;
    let result: StepResult | null = null;
    const cpu = (): number => servers.pids.reduce((s, pid) => s + cpuSeconds(pid), 0);
    for await (const line of createInterface({ input: child.stdout })) {
      const ev = JSON.parse(line) as { event: string; result?: StepResult };
      // The meters start and stop on the generator's word, so the window is the one it timed.
      if (ev.event === "window_open") cpuAtOpen = cpu();
      else if (ev.event === "window_close" && cpuAtOpen !== null) {
        serverCpuSeconds = cpu() - cpuAtOpen;
        windowRss = sumRss(servers.pids);
      } else if (ev.event === "result") result = ev.result!;
      else ctx.log(`${system} ${fmt(n)}: ${line}`);
    }
    const code = await exited;
    clearInterval(sampler);
    ctx.check(code === 0 && result !== null, `the load generator (${system}, N=${n}) exited ${code}:\n${stderr.join("").slice(-2000)}`);
    const r = result!;
    const s: Step = { ...r, serverCpuSeconds, cpuPerRenewalUs: r.window_renewals > 0 ? (serverCpuSeconds / r.window_renewals) * 1e6 : 0, peakRssMb: mb(peak), windowRssMb: mb(windowRss), loadAverage: Math.round(loadavg()[0]! * 100) / 100 };
    ctx.log(
      `${system} N=${fmt(n)}: registered in ${r.register_s} s (${r.register_errors} errors), window ${fmt(r.window_rate)}/s, CPU ${fmt(s.cpuPerRenewalUs, 1)} µs/renewal, ` +
        `peak RSS ${fmt(s.peakRssMb)} MB, renewal p99 ${r.renew_ms.p99} ms, watch p99 ${r.watch_ms.p99} ms, removal p99 ${fmt(r.removal_ms.p99)} ms (${r.stopped_removed}/${r.stopped}), ` +
        `${r.failed} failed, ${r.lost} lost${r.first_failure ? ` (${r.first_failure})` : ""}`,
    );
    return s;
  } finally {
    await servers.stop();
  }
}

/** A step's figures as one row: every measure the issue asks for. */
function stepRow(s: Step): Row {
  const held = s.all_renewed && s.registrations_seen === s.n && s.stopped_removed === s.stopped && s.false_removals === 0;
  return {
    measure: `${s.system}, N = ${fmt(s.n)}`,
    figure:
      `${fmt(s.cpuPerRenewalUs, 1)} µs server CPU/renewal; ${fmt(s.peakRssMb)} MB peak RSS; renewal p99 ${s.renew_ms.p99} ms; ` +
      `registration to watch p99 ${fmt(s.watch_ms.p99)} ms; stop to removal p99 ${fmt(s.removal_ms.p99)} ms (${s.stopped_removed} of ${s.stopped}); ` +
      `${s.all_renewed ? "every renewal answered" : `${fmt(s.failed + s.lost)} of ${fmt(s.sent)} renewals failed`}`,
    baseline: `${fmt(s.window_rate)} renewals/s in a ${s.window_s} s window; registered in ${s.register_s} s`,
    target: "every renewal answered",
    pass: held,
  };
}

export const peersScenario: Scenario = {
  name: "peers",
  title: "Side by side with etcd: instances kept alive every 30 s",
  aliases: ["etcd"],
  method:
    "One Go load generator (bench/peers) with two drivers and one runner: N instances register (256 in flight), each renews once " +
    "every 30 s in its own slot of the interval (a flat N/30 a second), a watcher times each registration from its send to its " +
    "event, and every 100th instance stops once all are registered, timed from its stop to the watcher seeing it removed. etcd: " +
    "clientv3 Grant (TTL 90 s) and Put with the lease, renewals on 16 LeaseKeepAlive streams of one connection, a prefix Watch on " +
    "a second client (DELETE = removed). Registry: register and heartbeat requests on its subjects (heartbeat interval 30 s, " +
    "evicted after three missed), core-NATS subscriptions to its registered and deregistered events on a second connection. " +
    "Each step starts its system fresh, servers pinned to CPU 0 and the generator to CPU 1; after a 5 s warm-up a 30 s window " +
    "(one renewal cycle) measures server CPU (from /proc: etcd; the registry plus its nats-server) over the renewals sent in it, " +
    "and renewal latency. A system's ramp stops at the first size where a renewal failed.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const peersDir = join(ROOT, "bench/peers");
    let etcd: string;
    try {
      etcd = process.env["ETCD_BIN"] ?? (await goBuild(join(peersDir, "etcd-server"), "etcd")).binary;
    } catch (e) {
      throw new Error(`no etcd: building the pinned etcd server (bench/peers/etcd-server) failed; set ETCD_BIN to an etcd binary, or install Go 1.26 with the module proxy reachable (Debian's older one: apt-get install etcd-server, then ETCD_BIN=/usr/bin/etcd)\n${(e as Error).message}`);
    }
    const version = spawnSync(etcd, ["--version"], { encoding: "utf8" });
    ctx.check(version.status === 0, `${etcd} --version failed: no etcd. Unset ETCD_BIN to build the pinned one (needs Go 1.26 and the module proxy), or install one (apt-get install etcd-server, then ETCD_BIN=/usr/bin/etcd)\n${version.stderr}`);
    const etcdVersion = /etcd Version: (\S+)/.exec(version.stdout)?.[1] ?? "unknown";
    const peers = (await goBuild(peersDir, "peers")).binary;
    const pinned = canPin();
    // BENCH_PEERS_SIZES narrows the ramp when a run has less time than the full one needs.
    const sizes = ctx.quick ? [200] : (process.env["BENCH_PEERS_SIZES"]?.split(",").map(Number) ?? FULL_SIZES);
    ctx.log(`etcd ${etcdVersion} (${etcd}); sizes ${sizes.join(", ")}; ${pinned ? `servers on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}` : "not pinned (taskset or a second core missing)"}`);

    const steps: Record<string, Step[]> = { etcd: [], registry: [] };
    const notRun: Record<string, number[]> = { etcd: [], registry: [] };
    for (const system of ["etcd", "registry"] as const) {
      let failed = false;
      for (const n of sizes) {
        if (failed) {
          notRun[system]!.push(n);
          continue;
        }
        const s = await step(ctx, peers, etcd, system, n, pinned);
        steps[system]!.push(s);
        failed = !s.all_renewed;
      }
    }
    const held = (system: string): number => Math.max(0, ...steps[system]!.filter((s) => s.all_renewed).map((s) => s.n));
    const rows: Row[] = [...steps["etcd"]!, ...steps["registry"]!].map(stepRow);
    rows.push({ measure: "largest N held with every renewal answered", figure: `registry ${fmt(held("registry"))}; etcd ${fmt(held("etcd"))}`, baseline: `sizes run: ${sizes.map((n) => fmt(n)).join(", ")}`, target: "reported", pass: null });
    for (const e of steps["etcd"]!) {
      const r = steps["registry"]!.find((x) => x.n === e.n);
      if (!r || !r.all_renewed || !e.all_renewed || e.cpuPerRenewalUs === 0) continue;
      rows.push({
        measure: `server CPU per renewal, registry / etcd, N = ${fmt(e.n)}`,
        figure: ratio(r.cpuPerRenewalUs / e.cpuPerRenewalUs),
        baseline: `registry ${fmt(r.cpuPerRenewalUs, 1)} µs, etcd ${fmt(e.cpuPerRenewalUs, 1)} µs`,
        target: "reported",
        pass: null,
      });
    }
    const skipped = Object.entries(notRun).filter(([, ns]) => ns.length > 0);
    return {
      rows,
      notes: [
        `etcd ${etcdVersion} (go.etcd.io/etcd/server/v3, pinned in bench/peers/etcd-server/go.mod) with ${ETCD_FLAGS.join(" ")}; its Go client go.etcd.io/etcd/client/v3 pinned in bench/peers/go.mod`,
        `registry with ${Object.entries(REGISTRY_ENV).map(([k, v]) => `${k}=${v}`).join(" ")} (fleet-1m's settings for large fleets), counted with its nats-server`,
        pinned ? `servers on CPU ${SERVER_CPU}, the load generator on CPU ${LOAD_CPU} (taskset)` : "processes not pinned",
        ...skipped.map(([system, ns]) => `${system}: not run at ${ns.map((n) => fmt(n)).join(", ")} (its ramp stopped at a failed step)`),
      ],
      details: { etcdVersion, sizes, pinned, steps, notRun },
    };
  },
};
