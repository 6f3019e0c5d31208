/**
 * nats_subject ownership against a real nats-server with two replicas on one bucket
 * (issue 14, finding 10): of two registrations racing for one subject exactly one wins, a
 * subject stays with its agent type while the type is down, and the claim is given back when
 * the type is removed after retention.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, testConfig, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { Kvm } from "@nats-io/kv";
import { LEASE_KEY } from "../../src/domain/model/records.js";

const ROUNDS = 20;

let server: NatsTestServer;
let a: TestRegistry;
let b: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  // Two replicas of one registry: the same bucket, stream and prefix.
  const config = testConfig(server.url, { retentionMs: 0 });
  a = await startRegistry(server.url, {}, config);
  b = await startRegistry(server.url, {}, config);
  c = await RawClient.connect(server.url, configOf(a).prefix);
});
afterAll(async () => {
  await c?.close();
  await a?.stop();
  await b?.stop();
  await server?.stop();
});

/** The agent types whose stored spec names `subject`, as a replica's view holds them once caught up. */
async function consumers(subject: string, revision: number): Promise<string[]> {
  await waitFor(() => a.view.revision >= revision, { message: `view at ${revision}` });
  return [...a.view.all()].filter((t) => t.spec.nats_subject === subject).map((t) => t.agent_type).sort();
}

describe("nats_subject claims", () => {
  it("lets exactly one of two simultaneous registrations of one subject win, every round", async () => {
    let bothWon = 0;
    let oneWon = 0;
    let sharedSubject = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const subject = `race.subject${round}`;
      const [r1, r2] = await Promise.all([
        c.request(`register.race-a${round}`, { spec: spec(`race-a${round}`, { nats_subject: subject }) }),
        c.request(`register.race-b${round}`, { spec: spec(`race-b${round}`, { nats_subject: subject }) }),
      ]);
      const winners = [r1, r2].filter((r) => r.ok);
      if (winners.length === 2) bothWon++;
      if (winners.length === 1) oneWon++;
      const loser = [r1, r2].find((r) => !r.ok);
      if (loser) expect(loser.body.error.code).toBe("conflict");
      const revision = Math.max(...winners.map((w) => w.body.revision as number));
      if ((await consumers(subject, revision)).length > 1) sharedSubject++;
    }
    console.log(`[subject race] ${ROUNDS} rounds: one winner ${oneWon}, both won ${bothWon}, stored twice ${sharedSubject}`);
    expect(sharedSubject).toBe(0);
    expect(bothWon).toBe(0);
    expect(oneWon).toBe(ROUNDS);
    // Claims are reserved keys too; none of them was written over the evictor lease. (Read from
    // the key's history rather than from step-down logs: on a loaded machine a late renewal
    // hands the lease over between the two replicas, which is no claim's doing.)
    const kv = await new Kvm(c.nc).open(configOf(a).bucket);
    const last = await kv.get(LEASE_KEY);
    expect(last).not.toBeNull();
    const values = [];
    // Read up to the value known now, and stop there: the lease is renewed meanwhile, and the
    // client's history ends by itself only on a message it sees as the last, or at an idle
    // heartbeat. One CI run waited out the test's 30 s here after all 20 rounds had passed.
    for await (const e of await kv.history({ key: LEASE_KEY })) {
      if (e.operation === "PUT") values.push(e.json<Record<string, unknown>>());
      if (e.revision >= last!.revision) break;
    }
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) expect(Object.keys(v)).toContain("holder");
  });

  it("keeps a subject with its agent type while the type is down", async () => {
    const owner = await c.request("register.team-x", { spec: spec("team-x", { nats_subject: "tasks.team-x" }), instance_id: "only" });
    expect(owner.ok).toBe(true);
    const left = await c.request("deregister.team-x.only", {});
    expect(left.body.agent_removed).toBe(true);
    await waitFor(() => a.view.get("team-x")?.status === "deregistered", { message: "team-x down" });
    const squat = await c.request("register.squatter", { spec: spec("squatter", { nats_subject: "tasks.team-x" }) });
    expect(squat.ok).toBe(false);
    expect(squat.body.error.code).toBe("conflict");
    // The owner comes back to its subject.
    expect((await c.request("register.team-x", { spec: spec("team-x", { nats_subject: "tasks.team-x" }) })).ok).toBe(true);
  });

  it("names another tenant's agent type to nobody outside that tenant", async () => {
    const acme = await c.request("tenant.acme.register.acme-secret", { spec: spec("acme-secret", { nats_subject: "tasks.tenanted", tenant_scope: "acme" }) });
    expect(acme.ok).toBe(true);
    const globex = await c.request("tenant.globex.register.globex-bot", { spec: spec("globex-bot", { nats_subject: "tasks.tenanted", tenant_scope: "globex" }) });
    expect(globex.body.error).toMatchObject({ code: "conflict", message: "nats_subject tasks.tenanted is already used by another agent type" });
    expect(globex.msg.headers?.get("Nats-Service-Error")).not.toContain("acme");
    const shared = await c.request("register.shared-bot", { spec: spec("shared-bot", { nats_subject: "tasks.tenanted" }) });
    expect(shared.body.error.message).not.toContain("acme");
    const sameTenant = await c.request("tenant.acme.register.acme-other", { spec: spec("acme-other", { nats_subject: "tasks.tenanted", tenant_scope: "acme" }) });
    expect(sameTenant.body.error.message).toContain("acme-secret");
  });
});
