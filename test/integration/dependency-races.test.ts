/**
 * Registrations that race to close a dependency cycle (PROTOCOL.md section 11.2): a@1 depending
 * on b and b@1 depending on a, sent at the same moment, each found the other not yet stored,
 * both were written, and the cycle existed (30 of 30 rounds, on one replica). Now the
 * registrations that change the dependency graph take turns on the bucket's graph key
 * (docs/architecture.md, "Dependency cycles across replicas"), so in every round exactly those
 * that can coexist are stored and the one closing the cycle is refused naming it: on one
 * replica, and on two replicas sharing the bucket, each taking its own share of the round.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Kvm, type KV } from "@nats-io/kv";
import { jetstream } from "@nats-io/jetstream";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";

const ROUNDS = 20;

let server: NatsTestServer;
let one: TestRegistry;
let pairA: TestRegistry;
let pairB: TestRegistry;
let viaOne: RawClient;
let viaA: RawClient;
let viaB: RawClient;
let oneKv: KV;
let pairKv: KV;

const dependsOn = (name: string) => ({ depends: [{ type: "agent", name, version: "1.0.0" }] });

beforeAll(async () => {
  server = await withNatsServer();
  const oneConfig = testConfig(server.url);
  one = await startRegistry(server.url, {}, oneConfig);
  // Two replicas of one registry: the same bucket, each on its own prefix (and so its own
  // events stream), so the test decides which replica takes which request.
  const pairConfig = testConfig(server.url);
  pairA = await startRegistry(server.url, {}, pairConfig);
  pairB = await startRegistry(server.url, {}, { ...pairConfig, prefix: `${pairConfig.prefix}b`, eventsStream: `${pairConfig.eventsStream}_B`, replicaName: "replica-b" });
  viaOne = await RawClient.connect(server.url, oneConfig.prefix);
  viaA = await RawClient.connect(server.url, pairConfig.prefix);
  viaB = await RawClient.connect(server.url, `${pairConfig.prefix}b`);
  const kvm = new Kvm(jetstream(viaOne.nc));
  oneKv = await kvm.open(oneConfig.bucket);
  pairKv = await kvm.open(pairConfig.bucket);
}, 120_000);

afterAll(async () => {
  await viaOne?.close();
  await viaA?.close();
  await viaB?.close();
  await one?.stop();
  await pairA?.stop();
  await pairB?.stop();
  await server?.stop();
});

type Outcome = { type: string; ok: boolean; status: number; body: any };

/** Every registration of the round sent at once, `types[i]` depending on `types[i + 1]` (the last on the first), through `via[i % via.length]`. */
async function ring(types: string[], via: RawClient[]): Promise<Outcome[]> {
  return Promise.all(
    types.map(async (type, i) => {
      const next = types[(i + 1) % types.length]!;
      const r = await via[i % via.length]!.request(`register.${type}`, { spec: spec(type, dependsOn(next)), instance_id: "i1", heartbeat_interval_ms: 3_600_000 });
      return { type, ok: r.ok, status: r.status, body: r.body };
    }),
  );
}

/** The agent types of `types` whose spec the bucket holds, with the agent types they depend on. */
async function storedEdges(kv: KV, types: string[]): Promise<Map<string, string[]>> {
  const edges = new Map<string, string[]>();
  for (const type of types) {
    const e = await kv.get(`agents.${type}`);
    if (e && e.operation === "PUT") edges.set(type, (e.json<{ spec: { depends?: { name: string }[] } }>().spec.depends ?? []).map((d) => d.name));
  }
  return edges;
}

function hasCycle(edges: Map<string, string[]>): boolean {
  const state = new Map<string, "open" | "done">();
  const visit = (t: string): boolean => {
    if (state.get(t) === "done" || !edges.has(t)) return false;
    if (state.get(t) === "open") return true;
    state.set(t, "open");
    const found = edges.get(t)!.some(visit);
    state.set(t, "done");
    return found;
  };
  return [...edges.keys()].some(visit);
}

/**
 * What is wrong with a round, or null: exactly one registration of the ring is refused, with
 * the cycle error on the dependency that closes it; the others are stored; the bucket holds no cycle.
 */
async function problemOf(kv: KV, outcomes: Outcome[]): Promise<string | null> {
  const said = JSON.stringify(outcomes.map((o) => [o.type, o.status, o.body?.error?.message ?? "ok"]));
  const refused = outcomes.filter((o) => !o.ok);
  if (refused.length !== 1) return `${refused.length} refused: ${said}`;
  const loser = refused[0]!;
  const issue = loser.body?.error?.issues?.[0];
  if (loser.status !== 400 || loser.body.error.code !== "invalid_spec" || issue?.path !== "depends.0" || !String(issue.message).startsWith("closes the dependency cycle ")) {
    return `refused otherwise than with the cycle error: ${said}`;
  }
  const types = outcomes.map((o) => o.type);
  const stored = await storedEdges(kv, types);
  const expected = types.filter((t) => t !== loser.type).sort();
  if (JSON.stringify([...stored.keys()].sort()) !== JSON.stringify(expected)) return `stored ${[...stored.keys()].join(", ")}: ${said}`;
  return hasCycle(stored) ? `the bucket holds a cycle: ${said}` : null;
}

/** Runs ROUNDS rounds of `round` and expects none to go wrong, saying how many did. */
async function everyRound(kv: KV, round: (r: number) => Promise<Outcome[]>): Promise<void> {
  const problems: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const problem = await problemOf(kv, await round(r));
    if (problem !== null) problems.push(`round ${r}: ${problem}`);
  }
  expect(problems, `${problems.length} of ${ROUNDS} rounds went wrong`).toEqual([]);
}

describe("registrations racing to close a dependency cycle", () => {
  it("on one replica: of a -> b and b -> a sent together, exactly one is stored, every round", async () => {
    await everyRound(oneKv, (r) => ring([`one2-${r}-a`, `one2-${r}-b`], [viaOne]));
  });

  it("on one replica: of a -> b -> c -> a sent together, exactly two are stored, every round", async () => {
    await everyRound(oneKv, (r) => ring([`one3-${r}-a`, `one3-${r}-b`, `one3-${r}-c`], [viaOne]));
  });

  // Each round alternates which replica takes which part of the ring.
  it("on two replicas of one bucket: the halves of a two-way cycle through different replicas, every round", async () => {
    await everyRound(pairKv, (r) => ring([`two2-${r}-a`, `two2-${r}-b`], r % 2 === 0 ? [viaA, viaB] : [viaB, viaA]));
  });

  it("on two replicas of one bucket: a three-way cycle split between them, every round", async () => {
    await everyRound(pairKv, (r) => ring([`two3-${r}-a`, `two3-${r}-b`, `two3-${r}-c`], r % 2 === 0 ? [viaA, viaB] : [viaB, viaA]));
  });
});
