/**
 * `serve` with DATABASE_URL runs the audit mirror beside the API (start/audit.ts serveAudit):
 * events are mirrored, `history` is answered, the metrics are on the replica's /metrics, the
 * password stays out of the log, and without the variable nothing of it starts.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { sql, type TestDatabase } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let db: TestDatabase;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  db = await withTestDatabase();
  const url = new URL(db.url);
  url.password = "not-needed-with-trust";
  reg = await startRegistry(server.url, { databaseUrl: url.toString() });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  await db?.drop();
});

it("mirrors the replica's events and answers history beside the API", async () => {
  expect((await c.request("register.srv-a", { spec: spec("srv-a"), instance_id: "one" })).ok).toBe(true);
  await waitFor(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM audit_events WHERE agent_type = 'srv-a'").catch(() => [{ n: 0 }]))[0].n === 1, {
    timeoutMs: 15_000,
    message: "mirrored",
  });
  const client = new RegistryClient(c.nc, { prefix: configOf(reg).prefix });
  const page = await client.history({ agent_type: "srv-a" });
  expect(page.events.map((e) => e.type)).toEqual(["registry.agent.registered"]);
  const metrics = await (await fetch(`http://127.0.0.1:${reg.httpPort}/metrics`)).text();
  expect(metrics).toMatch(/agent_registry_audit_writer 1/);
  const logged = JSON.stringify(reg.logs);
  expect(logged).not.toContain("not-needed-with-trust");
  expect(logged).toContain(":[redacted]@");
});
