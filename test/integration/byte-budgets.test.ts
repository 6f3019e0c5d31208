/**
 * Byte budgets on a real bucket (issue 35, item 3): a registration that would take its agent
 * type, or its tenant, past its share of the bucket is refused with the structured
 * `limit_exceeded` error naming the setting, nothing is stored, and the type's admitted
 * instances keep heartbeating while other types register.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, registerSubject, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

// 2 MiB: a tenth (about 205 KB) per type, half per tenant.
const BUCKET = 2 * 1024 * 1024;
const metadata = { blob: "m".repeat(4000) };

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { bucketMaxBytes: BUCKET });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

const bucketBytes = async () => (await (await jetstreamManager(c.nc)).streams.info(`KV_${configOf(reg).bucket}`)).state.bytes;

/** Registers instances of `type` one after another until one is refused; returns the admitted ids, the last admitted write's revision and the refusal. */
async function fill(type: string, s: Record<string, unknown>) {
  const admitted: string[] = [];
  let revision = 0;
  for (let i = 0; i < 200; i++) {
    const r = await c.request(registerSubject(type, s), { spec: s, instance_id: `${type}-${i}`, metadata, heartbeat_interval_ms: 60_000 });
    if (!r.ok) return { admitted, revision, refusal: r };
    admitted.push(`${type}-${i}`);
    revision = r.body.revision;
  }
  throw new Error(`${type}: 200 instances of 4 KB admitted, no budget bit`);
}

it("refuses a type's registration past REGISTRY_TYPE_MAX_BYTES with 429 limit_exceeded naming it, storing nothing; its instances still heartbeat and other types still register", async () => {
  const { admitted, revision, refusal } = await fill("hog", spec("hog"));
  // 4 copies of a ~4.3 KB record each, against about 205 KB.
  expect(admitted.length).toBeGreaterThan(5);
  expect(admitted.length).toBeLessThan(15);
  expect(refusal.status).toBe(429);
  expect(refusal.msg.headers?.get("Nats-Service-Error-Code")).toBe("429");
  expect(refusal.body.error.code).toBe("limit_exceeded");
  expect(refusal.body.error.message).toMatch(/^agent type hog holds about \d+ bytes of the bucket and this registration would add \d+ \(limit 209715, REGISTRY_TYPE_MAX_BYTES\)$/);

  // Nothing stored by a refusal: the bucket stays where it is (the lease's renewals replace their own value).
  const before = await bucketBytes();
  const again = await c.request("register.hog", { spec: spec("hog"), instance_id: "one-more", metadata });
  expect(again.body.error.code).toBe("limit_exceeded");
  expect(await bucketBytes()).toBeLessThanOrEqual(before + 512);
  // Read your writes: the count is the view's once it holds the last admitted registration.
  expect((await c.request("get", { agent_type: "hog", min_revision: revision })).body.agent.instance_count).toBe(admitted.length);

  // Admitted instances: heartbeats answered, and registering again (a reconnect) too.
  for (const id of admitted) expect((await c.request(`heartbeat.hog.${id}`, {})).ok).toBe(true);
  expect((await c.request("register.hog", { spec: spec("hog"), instance_id: admitted[0], metadata, heartbeat_interval_ms: 60_000 })).ok).toBe(true);
  // Another type is not held back by the hog.
  expect((await c.request("register.bystander", { spec: spec("bystander"), metadata })).ok).toBe(true);
});

it("refuses a tenant's registration past REGISTRY_TENANT_MAX_BYTES, whichever of its types asks, naming the tenant", async () => {
  let refusal: Awaited<ReturnType<typeof fill>>["refusal"] | undefined;
  // Each type stays under its own tenth; the tenant's half is what bites.
  for (let t = 0; t < 12 && refusal === undefined; t++) {
    const s = spec(`acme-${t}`, { tenant_scope: "acme" });
    for (let i = 0; i < 8; i++) {
      const r = await c.request(registerSubject(`acme-${t}`, s), { spec: s, instance_id: `i${i}`, metadata, heartbeat_interval_ms: 60_000 });
      if (!r.ok) {
        refusal = r;
        break;
      }
    }
  }
  expect(refusal?.status).toBe(429);
  expect(refusal?.body.error.code).toBe("limit_exceeded");
  expect(refusal?.body.error.message).toMatch(/^tenant acme holds about \d+ bytes .*\(limit 1048576, REGISTRY_TENANT_MAX_BYTES\)$/);
  const other = spec("globex-0", { tenant_scope: "globex" });
  expect((await c.request(registerSubject("globex-0", other), { spec: other, metadata })).ok).toBe(true);
});
