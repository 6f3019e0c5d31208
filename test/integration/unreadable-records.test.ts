/**
 * Records the registry cannot read, written straight into its bucket while lookups run
 * (issue 14, finding 1). One record of the wrong shape used to kill the process from the
 * schema-sharing timer within a second, and a replica started on such a bucket never became
 * ready. Property-based: random bytes, random JSON, unknown kinds and newer formats, and valid
 * records with one field of the wrong type, under agent and instance keys (test/harness/bad-records.ts),
 * against a registry process and a real nats-server. Asserted: the process stays up and ready,
 * every lookup of the seed agents is answered with its provider, the counter
 * agent_registry_store_records_unreadable_total equals the number of bad entries, and a
 * replica started on the bucket afterwards becomes ready and counts every bad key once.
 */
import fc from "fast-check";
import { Kvm } from "@nats-io/kv";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, spec, registerSubject } from "../harness/registry.js";
import { metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { ISSUE_14_RECORD, badRecord, type BadRecord } from "../harness/bad-records.js";
import { waitFor } from "../harness/wait.js";

const RUNS = process.env.RELIABILITY_FULL === "1" ? 2_000 : 150;
const PREFIX = "ur.registry";
const BUCKET = "ur-registry";
const UNREADABLE = "agent_registry_store_records_unreadable_total";
const ALL_STATUSES = ["registered", "ready", "draining", "deregistered"];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

const env = (natsUrl: string) => ({
  NATS_URL: natsUrl,
  REGISTRY_PREFIX: PREFIX,
  REGISTRY_BUCKET: BUCKET,
  REGISTRY_EVENTS_STREAM: "UR_EVENTS",
  // Nothing expires during the run: the seeds must be there at the end for their own sake.
  REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "3600000",
  LOG_LEVEL: "warn",
});

/** Lookups of both seeds from their own connection until `done`; every one must name its provider. */
async function lookupsDuring(c: RawClient, done: Promise<unknown>): Promise<{ answered: number; failures: string[]; ms: number[] }> {
  const out = { answered: 0, failures: [] as string[], ms: [] as number[] };
  let over = false;
  void done.finally(() => (over = true));
  while (!over) {
    for (const [tenant, type] of [["", "seed-a"], ["tenant.acme.", "seed-b"]] as const) {
      const started = performance.now();
      const r = await c.request(`${tenant}lookup`, { capability: `${type}.run` }, 10_000).catch((e: unknown) => String(e));
      out.ms.push(performance.now() - started);
      if (typeof r === "object" && r.ok && r.body.providers.length === 1 && r.body.providers[0].agent_type === type) out.answered++;
      else out.failures.push(JSON.stringify(typeof r === "object" ? r.body : r).slice(0, 200));
    }
  }
  return out;
}

/** Every query op of the seeds answers without `internal`, and the seeds read as registered. */
async function expectSeedsServed(c: RawClient): Promise<void> {
  expect((await c.request("lookup", { capability: "seed-a.run" })).body.providers).toHaveLength(1);
  expect((await c.request("tenant.acme.lookup", { capability: "seed-b.run" })).body.providers).toHaveLength(1);
  expect((await c.request("get", { agent_type: "seed-a" })).body.agent.instances).toHaveLength(1);
  for (const [op, body] of [
    ["list", { status: ALL_STATUSES, limit: 1000 }],
    ["capabilities", { status: ALL_STATUSES }],
    ["search", { query: "seed agent runs" }],
    ["discover", {}],
    ["find", { skill: "seed-a.run" }],
    ["route", { skill: "seed-a.run" }],
  ] as const) {
    const r = await c.request(`tenant.acme.${op}`, body);
    expect(r.ok, `${op}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(true);
  }
}

async function expectUp(proc: RegistryProcess, exited: () => boolean): Promise<void> {
  expect(exited(), `the registry process exited:\n${proc.logs.slice(-20).join("\n")}`).toBe(false);
  expect(await proc.ready()).toBe(true);
}

it("records the registry cannot read are skipped and counted, lookups go on, and a restart becomes ready", { timeout: 240_000 }, async () => {
  await using server = await withNatsServer();
  let proc = await spawnRegistry("unreadable-1", env(server.url));
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const c = await RawClient.connect(server.url, PREFIX);
  const probe = await RawClient.connect(server.url, PREFIX);
  try {
    /** Registers and returns the write's revision (a lookup right after passes it as min_revision: views trail the store). */
    const register = async (type: string, extra: Record<string, unknown> = {}, id = `${type.slice(-1)}1`): Promise<number> => {
      const r = await c.request(registerSubject(type, extra), { spec: spec(type, extra), instance_id: id });
      expect(r.ok).toBe(true);
      return r.body.revision as number;
    };
    await register("seed-a");
    await register("seed-b", { tenant_scope: "acme" });
    // Victims: registered agent types whose records the property garbles.
    await register("victim-a");
    const registered = await register("victim-b");
    // Read your writes: the lookups below send no min_revision and count a missing seed as a failure.
    expect((await c.request("get", { agent_type: "victim-b", min_revision: registered })).ok).toBe(true);
    const kv = await new Kvm(c.nc).open(BUCKET);
    const rssBefore = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;

    const written: BadRecord[] = [];
    let stop!: () => void;
    const lookups = lookupsDuring(probe, new Promise<void>((r) => (stop = r)));
    try {
      await fc.assert(
        fc.asyncProperty(badRecord, async (bad) => {
          await kv.put(bad.key, bad.value);
          written.push(bad);
          expect(exited, `the registry exited after ${bad.label} under ${bad.key}:\n${proc.logs.slice(-10).join("\n")}`).toBe(false);
        }),
        { numRuns: RUNS, seed: 14_001, endOnFailure: true },
      );
      // The exact record of the issue, last, as a start would find it.
      const last: BadRecord = { key: "agents.x", value: new TextEncoder().encode(ISSUE_14_RECORD), label: "issue 14" };
      await kv.put(last.key, last.value);
      written.push(last);
      // Every bad entry counted once the view has caught up; the timers (schema sharing every
      // 100 ms, the lag check every 3 s, the fleet gauges every 5 s) have all run on them by then.
      await waitFor(async () => exited || metricValue(await proc.metrics(), UNREADABLE) === written.length, { timeoutMs: 20_000, message: `${written.length} unreadable records counted` });
      await new Promise((r) => setTimeout(r, 5_500));
      await expectUp(proc, () => exited);
    } finally {
      stop();
    }
    const { answered, failures, ms } = await lookups;
    const rss = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;
    console.log(`${written.length} unreadable records written; ${answered} lookups answered meanwhile (p50 ${pct(ms, 50).toFixed(2)} ms, p99 ${pct(ms, 99).toFixed(2)} ms, max ${Math.max(...ms).toFixed(1)} ms), ${failures.length} not; RSS ${rssBefore.toFixed(1)} -> ${rss.toFixed(1)} MB`);
    expect(failures).toEqual([]);
    await expectUp(proc, () => exited);
    expect(metricValue(await proc.metrics(), UNREADABLE)).toBe(written.length);
    await expectSeedsServed(c);
    // Writes still work, and what they write is served.
    const afterBad = await register("after-bad");
    expect((await c.request("lookup", { capability: "after-bad.run", min_revision: afterBad })).body.providers).toHaveLength(1);

    // A replica started on this bucket: ready, serving, each key that still holds a bad record counted once.
    await proc.stop();
    proc = await spawnRegistry("unreadable-2", env(server.url));
    exited = false;
    void proc.exited.then(() => (exited = true));
    const badKeys = new Set(written.map((w) => w.key));
    await waitFor(async () => exited || metricValue(await proc.metrics(), UNREADABLE) === badKeys.size, { timeoutMs: 20_000, message: `${badKeys.size} bad keys counted after the restart` });
    await new Promise((r) => setTimeout(r, 5_500));
    await expectUp(proc, () => exited);
    await expectSeedsServed(c);
    expect((await c.request("lookup", { capability: "after-bad.run" })).body.providers).toHaveLength(1);
  } finally {
    await c.close();
    await probe.close();
    await proc.stop();
  }
});
