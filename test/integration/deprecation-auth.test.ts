/**
 * Deprecation (docs/trust.md, "Deprecation") on a real registry under deploy/nats/auth.conf,
 * with the audit mirror on the run's PostgreSQL as the `audit` user: acme's agent user and the
 * coordinators are refused the operator's subjects by NATS; the operator deprecates acme's agent
 * with the CLI, and every query of acme's coordinator (SDK, MCP tools, HTTP discovery front)
 * still finds it, marked deprecated with the reason and successor; the operator undeprecates it;
 * both events are stored and mirrored into PostgreSQL with acme as their tenant, and `history`
 * answers them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { PermissionDeniedError, type RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { waitFor } from "../harness/wait.js";
import { AUTH_CONF, AuthConfUsers, authPassword, inboxOf, operatorCliEnv } from "../harness/auth-conf.js";
import { callTool, type ToolContext } from "../../src/mcp/tool-definition.js";
import { registryTools } from "../../src/mcp/tools.js";
import { loadDiscoveryConfig } from "../../src/config/discovery.js";
import { createDiscoveryServer, type DiscoveryServer } from "../../src/discovery/http-server.js";
import { silentLogger } from "../../src/kit/logger.js";
import { mirroredRows, startAudit, type TestAudit } from "../harness/audit.js";
import { withTestDatabase } from "../harness/shared-postgres.js";
import type { TestDatabase } from "../harness/postgres.js";

const CAP = "acme-invoices.run";
const MARK = { by: "alice", reason: "use the ledger-checked agent", successor: "acme-ledger" };

describe.skipIf(findNatsServerBinary() === null)("deprecation under deploy/nats/auth.conf, mirrored by the audit trail", () => {
  let server: NatsServerHandle;
  let registry: TestRegistry;
  let db: TestDatabase;
  let audit: TestAudit;
  let acme: RegistryClient;
  let front: DiscoveryServer;

  const users = new AuthConfUsers(() => server.url);
  const as = (user: string, tenant?: string) => users.as(user, tenant);
  const cli = (...args: string[]) => runCli(args, operatorCliEnv(server.url));

  /** The `deprecated` mark each of acme's coordinator's queries shows for acme-invoices (undefined: found, not marked; "missing": not found). */
  async function marks(): Promise<Record<string, unknown>> {
    const of = (x: { deprecated?: unknown } | undefined) => (x === undefined ? "missing" : x.deprecated);
    const route = await acme.route({ skill: CAP });
    return {
      lookup: of((await acme.lookup(CAP)).providers.find((p) => p.agent_type === "acme-invoices")),
      route: route.agent_type === "acme-invoices" ? route.deprecated : "missing",
      find: of((await acme.find({ skill: CAP })).agents.find((a) => a.agent_type === "acme-invoices")),
      search: of((await acme.search("acme-invoices agent")).results.find((r) => r.agent_type === "acme-invoices")),
      discover: of((await acme.discover({})).agents.find((a) => a.id === "acme-invoices")),
      get: (await acme.get("acme-invoices")).agent.deprecated,
    };
  }

  /** The mark as the MCP tools capability_lookup and route return it on acme's coordinator. */
  async function mcpMarks(): Promise<unknown[]> {
    const ctx = { link: { client: async () => acme }, delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 2000 } as unknown as ToolContext;
    const tools = new Map(registryTools({ delegate: false }).map((t) => [t.name, t]));
    const lookup = (await callTool(tools.get("capability_lookup")!, { capability: CAP }, ctx)).structuredContent as { providers: Array<{ deprecated?: unknown }> };
    const route = (await callTool(tools.get("route")!, { skill: CAP }, ctx)).structuredContent as { deprecated?: unknown };
    return [lookup.providers[0]?.deprecated, route.deprecated];
  }

  beforeAll(async () => {
    await ensureBuilt();
    server = await startNatsServer({ configText: AUTH_CONF, jetstream: true });
    registry = await startRegistry(server.url, { prefix: "registry", bucket: "agent-registry", eventsStream: "REGISTRY_EVENTS", natsUser: "registry", natsPassword: authPassword("registry") });
    db = await withTestDatabase();
    audit = await startAudit({
      natsUrl: server.url,
      databaseUrl: db.url,
      prefix: "registry",
      stream: "REGISTRY_EVENTS",
      nats: { user: "audit", pass: authPassword("audit"), inboxPrefix: inboxOf("audit") },
    });
    // The HTTP discovery front, on the operator's connection (it queries every tenant's view).
    await as("operator");
    const operatorNc = users.conns.at(-1)!;
    acme = await as("coordinator-acme", "acme");
    front = createDiscoveryServer({ config: loadDiscoveryConfig({}, {}, { httpPort: 0, publisher: "example.com" }), nc: operatorNc, client: { prefix: "registry" }, log: silentLogger });
    await front.listen();
    const agent = await as("agent-acme-invoices", "acme");
    const reply = await agent.register({ spec: spec("acme-invoices", { owner_team: "acme-finance" }) as AgentSpecInput, instance_id: "inv-1" });
    await acme.get("acme-invoices", { minRevision: reply.revision });
  }, 180_000);

  afterAll(async () => {
    await front?.close();
    await audit?.stop();
    await users.close();
    await registry?.stop();
    await server?.stop();
    await db?.drop();
  });

  it("acme's agent user and the coordinators cannot deprecate or undeprecate: NATS refuses them", async () => {
    const agent = await as("agent-acme-invoices", "acme");
    const shared = await as("coordinator");
    for (const client of [agent, shared, acme]) {
      const refused = await client.deprecate("acme-invoices", { by: "mallory", reason: "x" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PermissionDeniedError);
      expect((refused as PermissionDeniedError).subject).toBe("registry.approval.deprecate.acme-invoices");
      expect(await client.undeprecate("acme-invoices", { by: "mallory" }).catch((e: unknown) => e)).toBeInstanceOf(PermissionDeniedError);
    }
    expect((await acme.get("acme-invoices")).agent.deprecated).toBeUndefined();
  });

  it("the operator deprecates it with the CLI; every query still finds it, marked, and the mirror keeps the event", async () => {
    const out = await cli("deprecate", "acme-invoices", "--reason", MARK.reason, "--successor", MARK.successor, "--by", MARK.by, "--version", "1.0.0");
    expect(out).toMatchObject({ code: 0, stderr: "" });
    expect(out.stdout).toMatch(/^acme-invoices 1\.0\.0 \(tenant acme\) deprecated by alice: use the ledger-checked agent; use acme-ledger; still routable \(revision \d+\)\n$/);
    const expected = expect.objectContaining(MARK);
    await waitFor(async () => (await acme.get("acme-invoices")).agent.deprecated !== undefined, { message: "the view has the deprecation" });
    expect(await marks()).toEqual({ lookup: expected, route: expected, find: expected, search: expected, discover: expected, get: expected });
    expect(await mcpMarks()).toEqual([expected, expected]);
    const listed = (await (await fetch(`${front.url}/tenants/acme/agents`)).json()) as { agents?: unknown; items?: unknown };
    expect(JSON.stringify(listed)).toMatch(/"deprecated":true[^}]*"deprecation_reason":"use the ledger-checked agent","successor":"acme-ledger"/);

    await waitFor(async () => (await mirroredRows(db.url)).some((r) => r.type === "registry.agent.deprecated"), { timeoutMs: 20_000, message: "the deprecated event mirrored" });
    const row = (await mirroredRows(db.url)).find((r) => r.type === "registry.agent.deprecated")!;
    expect(row.tenant).toBe("acme");
    expect(row.event.data).toMatchObject({ agent_type: "acme-invoices", version: "1.0.0", tenant_scope: "acme", deprecated: true, ...MARK });
  });

  it("the operator undeprecates it; the mark goes, and history answers both events from PostgreSQL", async () => {
    const out = await cli("undeprecate", "acme-invoices", "--by", "bob", "--reason", "acme-ledger is late");
    expect(out).toMatchObject({ code: 0, stderr: "" });
    expect(out.stdout).toMatch(/^acme-invoices 1\.0\.0 \(tenant acme\) no longer deprecated; still routable \(revision \d+\)\n$/);
    await waitFor(async () => (await acme.get("acme-invoices")).agent.deprecated === undefined, { message: "the view has the withdrawal" });
    expect(await marks()).toEqual({ lookup: undefined, route: undefined, find: undefined, search: undefined, discover: undefined, get: undefined });
    const types = ["registry.agent.deprecated", "registry.agent.undeprecated"];
    await waitFor(async () => (await acme.history({ agent_type: "acme-invoices", types })).events.length === 2, { timeoutMs: 20_000, message: "both events in history" });
    const history = await acme.history({ agent_type: "acme-invoices", types });
    expect(history.events.map((e) => [e.type, (e.data as { by: string }).by])).toEqual([["registry.agent.deprecated", "alice"], ["registry.agent.undeprecated", "bob"]]);
    expect(history.events[1]!.data).toMatchObject({ deprecated: false, reason: "acme-ledger is late", successor: null });
    // A second withdrawal changes nothing: 409, exit code 1.
    const again = await cli("undeprecate", "acme-invoices", "--by", "bob");
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not deprecated/);
  });
});
