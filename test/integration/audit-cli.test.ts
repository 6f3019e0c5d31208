/**
 * `agent-registry audit` and `agent-registry history` run in this process (src/cli/main.ts):
 * migrate-only, a missing database URL, the history lines and JSON, flag mistakes; and the
 * registry itself leaves `history` to the mirror.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/context.js";
import { startAudit, type TestAudit } from "../harness/audit.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { sql, type TestDatabase } from "../harness/postgres.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let db: TestDatabase;
let audit: TestAudit | undefined;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  db = await withTestDatabase();
});
afterAll(async () => {
  await audit?.stop();
  await c?.close();
  await reg?.stop();
  await server?.stop();
  await db?.drop();
});

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env, isTTY: false, interrupted: () => new Promise(() => {}) };
  const code = await main(args, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

const common = () => ["--nats", server.url, "--prefix", configOf(reg).prefix];

it("leaves history to the mirror: the registry does not answer it", async () => {
  const err = await c.request("history", {}, 1000).catch((e: unknown) => e);
  expect(String(err)).toMatch(/no responders/i);
  const r = await cli(["history", "cli-a", ...common()]);
  expect(r.code).toBe(3);
  // It names what is missing: the mirror, not the registry (which is running).
  expect(r.stderr).toMatch(/^error: no audit mirror is answering \(start `agent-registry audit`, or `agent-registry serve` with DATABASE_URL\) on \S+\.history\n$/);
});

it("audit --migrate-only creates the schema and exits 0; without a database URL it is a usage error", async () => {
  const r = await cli(["audit", "--migrate-only", "--database-url", db.url]);
  expect(r.code, r.stderr).toBe(0);
  expect((await sql(db.url, "SELECT version FROM schema_migrations")).map((x) => x.version)).toEqual([1]);
  const again = await cli(["audit", "--migrate-only"], { DATABASE_URL: db.url });
  expect(again.code).toBe(0);
  const missing = await cli(["audit"]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("DATABASE_URL / --database-url: required");
});

it("history prints an agent's stored events, oldest first, as lines or JSON", async () => {
  expect((await c.request("register.cli-a", { spec: spec("cli-a"), instance_id: "one" })).ok).toBe(true);
  expect((await c.request("heartbeat.cli-a.one", { status: "draining" })).ok).toBe(true);
  expect((await c.request("deregister.cli-a.one", {})).ok).toBe(true);
  audit = await startAudit({ natsUrl: server.url, databaseUrl: db.url, prefix: configOf(reg).prefix, stream: configOf(reg).eventsStream });
  await waitFor(async () => (await sql(db.url, "SELECT count(*)::int AS n FROM audit_events WHERE agent_type = 'cli-a'"))[0].n === 3, { timeoutMs: 10_000, message: "mirrored" });

  const lines = await cli(["history", "cli-a", ...common()]);
  expect(lines.code, lines.stderr).toBe(0);
  const printed = lines.stdout.trim().split("\n");
  expect(printed.map((l) => /(agent\.\w+)/.exec(l)?.[1])).toEqual(["agent.registered", "agent.status_changed", "agent.deregistered"]);
  expect(printed[0]).toContain("cli-a  1.0.0 instance one (first instance)");

  const json = await cli(["history", "cli-a", "--json", "--type", "agent.deregistered", "--since", "1h", ...common()]);
  const body = JSON.parse(json.stdout);
  expect(body.events.map((e: { data: { reason: string } }) => e.data.reason)).toEqual(["graceful"]);
  expect(body.mirrored_seq).toBeGreaterThan(0);

  const limited = await cli(["history", "cli-a", "--limit", "1", ...common()]);
  expect(limited.stdout).toContain("(more: raise --limit above 1)");
  const none = await cli(["history", "cli-a", "--until", "2000-01-01T00:00:00Z", ...common()]);
  expect(none.stdout).toContain("no stored events of cli-a");
});

it("refuses flag mistakes before connecting", async () => {
  expect((await cli(["history", "Bad Type"])).code).toBe(2);
  expect((await cli(["history", "cli-a", "--type", "agent.nope"])).code).toBe(2);
  expect((await cli(["history", "cli-a", "--since", "last tuesday"])).code).toBe(2);
  expect((await cli(["history", "cli-a", "--limit", "0"])).code).toBe(2);
});
