/**
 * The first `search` after a burst of registrations (issue 14, finding 8). The search index
 * used to be brought up to date in one go by the first search: 300 verbose specs held the
 * event loop for 9.8 s, every other query waited behind it. Against a registry process and a
 * real nats-server, with another client looking up throughout, asserted: the first search
 * answers with the right results and lookups are answered while it is under way. The
 * bystander's latencies and the registry's RSS are printed for docs/reliability.md; nothing
 * is timed in the assertions.
 */
import { Kvm } from "@nats-io/kv";
import { expect, it } from "vitest";
import { withNatsServer } from "../harness/nats.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { agentRecord, liveRecord } from "../harness/bad-records.js";

const PREFIX = "si.registry";
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

/** Deterministic words with a skewed frequency, as text has: a few common, many rare. */
function textOf(seed: number, chars: number): string {
  let x = seed * 2654435761 + 1;
  let out = "";
  while (out.length < chars) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const rank = Math.floor(20_000 * (x / 2147483648) ** 3);
    let w = "";
    for (let r = rank + 17_576; r > 0; r = Math.floor(r / 26)) w += String.fromCharCode(97 + (r % 26));
    out += `${w} `;
  }
  return out.slice(0, chars);
}

/** A spec near the request size limit: long descriptions and examples on 12 capabilities. */
function verboseSpec(t: number): Record<string, unknown> {
  const type = `verbose-${t}`;
  return spec(type, {
    description: textOf(t, 8_000),
    capabilities: Array.from({ length: 12 }, (_, i) => ({
      name: `${type}.c${i}`,
      description: `${i === 0 ? `needle${t} ` : ""}${textOf(t * 100 + i, 4_000)}`,
      input_schema: {},
      output_schema: {},
      tags: ["verbose", `group-${t % 10}`],
      examples: [textOf(t * 1000 + i, 4_000), textOf(t * 1000 + i + 500, 4_000), textOf(t * 1000 + i + 700, 4_000)],
    })),
  });
}

/** Lookups from their own connection until stopped, each with the time it completed. */
function bystander(c: RawClient): { stop: () => Promise<{ done: number[]; ms: number[]; failures: string[] }> } {
  const out = { done: [] as number[], ms: [] as number[], failures: [] as string[] };
  let on = true;
  const loop = (async () => {
    while (on) {
      const started = performance.now();
      const r = await c.request("lookup", { capability: "seed.run" }, 30_000).catch((e: unknown) => String(e));
      out.done.push(performance.now());
      out.ms.push(performance.now() - started);
      if (!(typeof r === "object" && r.ok && r.body.providers.length === 1)) out.failures.push(JSON.stringify(typeof r === "object" ? r.body : r).slice(0, 200));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return out;
    },
  };
}

/** The first search while another client looks up: its reply, and the lookups answered meanwhile. */
async function firstSearchDuringLookups(proc: RegistryProcess, c: RawClient, probe: RawClient, query: string) {
  const rssBefore = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;
  const lookups = bystander(probe);
  await new Promise((r) => setTimeout(r, 200));
  const sent = performance.now();
  const search = await c.request("search", { query, limit: 5 }, 60_000);
  const answered = performance.now();
  await new Promise((r) => setTimeout(r, 200));
  const { done, ms, failures } = await lookups.stop();
  const rssAfter = metricValue(await proc.metrics(), "process_resident_memory_bytes") / 2 ** 20;
  const during = done.filter((t) => t > sent && t < answered).length;
  const figures = `first search ${(answered - sent).toFixed(0)} ms; ${during} lookups answered meanwhile; bystander p50 ${pct(ms, 50).toFixed(2)} ms, p99 ${pct(ms, 99).toFixed(2)} ms, max ${Math.max(...ms).toFixed(0)} ms; RSS ${rssBefore.toFixed(1)} -> ${rssAfter.toFixed(1)} MB`;
  return { search, during, failures, figures };
}

it("the first search after 300 verbose registrations answers while other lookups go on", { timeout: 240_000 }, async () => {
  await using server = await withNatsServer();
  const proc = await spawnRegistry("search-1", { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX, REGISTRY_BUCKET: "si1", REGISTRY_EVENTS_STREAM: "SI1_EVENTS", LOG_LEVEL: "warn" });
  const c = await RawClient.connect(server.url, PREFIX);
  const probe = await RawClient.connect(server.url, PREFIX);
  try {
    expect((await c.request("register.seed", { spec: spec("seed"), instance_id: "s1" })).ok).toBe(true);
    let registered = 0;
    for (let t = 0; t < 300; t += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, k) => c.request(`register.verbose-${t + k}`, { spec: verboseSpec(t + k), instance_id: "v1" }, 30_000)));
      for (const r of batch) expect(r.ok, JSON.stringify(r.body).slice(0, 300)).toBe(true);
      registered = Math.max(registered, ...batch.map((r) => r.body.revision as number));
    }
    // The search sends no min_revision (it is the index build that is measured): it starts once the
    // view holds every registration, through a lookup that waits for them and builds no index.
    expect((await c.request("lookup", { capability: "seed.run", min_revision: registered }, 30_000)).ok).toBe(true);
    const { search, during, failures, figures } = await firstSearchDuringLookups(proc, c, probe, "needle123");
    console.log(`300 verbose specs: ${figures}`);
    expect(search.ok).toBe(true);
    expect(search.body.results[0]).toMatchObject({ agent_type: "verbose-123", capability: "verbose-123.c0" });
    expect(failures).toEqual([]);
    // A lookup sent just before the search may land just after it was sent: more than that must have.
    expect(during).toBeGreaterThanOrEqual(3);
    // Later changes are indexed as they come: a new spec is found by the next search that asks
    // for its revision (the reply comes after the write, not after the view applied it).
    const late = await c.request("register.verbose-999", { spec: verboseSpec(999), instance_id: "v1" });
    expect(late.ok).toBe(true);
    expect((await c.request("search", { query: "needle999", min_revision: late.body.revision })).body.results[0]).toMatchObject({ agent_type: "verbose-999" });
  } finally {
    await c.close();
    await probe.close();
    await proc.stop();
  }
});

it("the first search at 10,000 agent types answers while other lookups go on", { timeout: 240_000 }, async () => {
  await using server = await withNatsServer();
  const bucket = "si2";
  const c = await RawClient.connect(server.url, PREFIX);
  const probe = await RawClient.connect(server.url, PREFIX);
  // Seeded straight into the bucket, as a cold start finds it.
  const kv = await new Kvm(c.nc).create(bucket, { history: 1 });
  const enc = new TextEncoder();
  for (let t = 0; t < 10_000; t += 500) {
    await Promise.all(
      Array.from({ length: 500 }, async (_, k) => {
        const type = `fleet-${t + k}`;
        const record = agentRecord(type);
        record["spec"].description = `fleet agent ${t + k}: ${textOf(t + k, 200)}`;
        record["spec"].capabilities[0].description = textOf(t + k + 50_000, 300);
        await kv.put(`agents.${type}`, enc.encode(JSON.stringify(record)));
        await kv.put(`instances.${type}.i1`, enc.encode(JSON.stringify({ ...liveRecord(), last_heartbeat: Date.now(), heartbeat_interval_ms: 3_600_000 })));
      }),
    );
  }
  const proc = await spawnRegistry("search-2", { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX, REGISTRY_BUCKET: bucket, REGISTRY_EVENTS_STREAM: "SI2_EVENTS", REGISTRY_MAX_HEARTBEAT_INTERVAL_MS: "3600000", LOG_LEVEL: "warn" });
  try {
    const seed = await c.request("register.seed", { spec: spec("seed"), instance_id: "s1" });
    expect(seed.ok).toBe(true);
    // The bystander's lookups send no min_revision and count a missing seed as a failure.
    expect((await c.request("get", { agent_type: "seed", min_revision: seed.body.revision }, 30_000)).ok).toBe(true);
    const { search, during, failures, figures } = await firstSearchDuringLookups(proc, c, probe, "fleet agent 4242");
    console.log(`10,000 agent types: ${figures}`);
    expect(search.ok).toBe(true);
    expect(search.body.results[0]).toMatchObject({ agent_type: "fleet-4242" });
    expect(failures).toEqual([]);
    expect(during).toBeGreaterThanOrEqual(3);
  } finally {
    await c.close();
    await probe.close();
    await proc.stop();
  }
});
