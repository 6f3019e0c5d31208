/**
 * The approval gate (docs/trust.md) on a real registry under deploy/nats/auth.conf: tenant acme
 * is set to manual, shared agents stay auto. A new acme agent is not routable by any query of
 * acme's coordinator until the operator approves it; acme's agent user and the coordinators are
 * refused the operator's subjects by NATS; a changed spec of the approved type takes the type
 * out of routing until decided, and the operator's rejection keeps it out; each decision is a
 * stored event with who decided and why. A shared agent routes at once, as in v1.1.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { PermissionDeniedError, type RegistryClient, type AgentSpecInput, type RegistryEvent } from "../../src/client/index.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { waitFor } from "../harness/wait.js";
import { AUTH_CONF, AuthConfUsers, authPassword, operatorCliEnv } from "../harness/auth-conf.js";
import { callTool, type ToolContext } from "../../src/mcp/tool-definition.js";
import { registryTools } from "../../src/mcp/tools.js";
import { loadDiscoveryConfig } from "../../src/config/discovery.js";
import { createDiscoveryServer, type DiscoveryServer } from "../../src/discovery/http-server.js";
import { silentLogger } from "../../src/kit/logger.js";


const acmeSpec = (extra: Record<string, unknown> = {}) => spec("acme-invoices", { owner_team: "acme-finance", ...extra }) as AgentSpecInput;

describe.skipIf(findNatsServerBinary() === null)("the approval gate under deploy/nats/auth.conf", () => {
  let dir: string;
  let server: NatsServerHandle;
  let registry: TestRegistry;
  const events: RegistryEvent[] = [];
  let operator: RegistryClient;
  let acmeCoordinator: RegistryClient;
  let front: DiscoveryServer;

  const users = new AuthConfUsers(() => server.url);
  const as = (user: string, tenant?: string) => users.as(user, tenant);
  const cli = (...args: string[]) => runCli(args, operatorCliEnv(server.url));

  /** Which of acme's coordinator's queries return acme-invoices now. */
  async function routedBy(client: RegistryClient, type = "acme-invoices"): Promise<string[]> {
    const cap = `${type}.run`;
    const hits: string[] = [];
    if ((await client.lookup(cap)).providers.some((p) => p.agent_type === type)) hits.push("lookup");
    if (await client.route({ skill: cap }).then((r) => r.agent_type === type, () => false)) hits.push("route");
    if ((await client.find({ skill: cap })).agents.some((a) => a.agent_type === type)) hits.push("find");
    if ((await client.search(`${type} agent`)).results.some((r) => r.agent_type === type)) hits.push("search");
    if ((await client.discover({})).agents.some((a) => a.id === type)) hits.push("discover");
    if ((await client.capabilities()).capabilities.some((c) => c.providers.includes(type))) hits.push("capabilities");
    return hits;
  }
  const ALL = ["lookup", "route", "find", "search", "discover", "capabilities"];

  /** Which documents of the HTTP discovery front (acme's path) name acme-invoices. */
  async function httpFinds(): Promise<string[]> {
    const names = async (path: string, init?: RequestInit): Promise<boolean> => JSON.stringify(await (await fetch(`${front.url}/tenants/acme${path}`, init)).json()).includes("acme:acme-invoices");
    const hits: string[] = [];
    if (await names("/.well-known/ai-catalog.json")) hits.push("manifest");
    if (await names("/agents")) hits.push("agents");
    if (await names(`/agents?${new URLSearchParams({ filter: "type = 'application/a2a-agent-card+json'", orderBy: "displayName" })}`)) hits.push("agents filtered");
    const search = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: { text: "acme-invoices agent" } }) };
    if (await names("/search", search)) hits.push("search");
    const card = await fetch(`${front.url}/tenants/acme/agents/acme-invoices/agent-card.json`);
    if (card.status === 200) hits.push("card");
    return hits;
  }

  /** Which MCP tools, run on this client (as `agent-registry mcp` runs them on its link), name acme-invoices. */
  async function mcpFinds(client: RegistryClient): Promise<string[]> {
    const ctx = { link: { client: async () => client }, delegateTimeoutMs: 1000, maxDelegateTimeoutMs: 2000 } as unknown as ToolContext;
    const tools = new Map(registryTools({ delegate: false }).map((t) => [t.name, t]));
    const calls = [
      ["agents_discover", {}],
      ["capability_lookup", { capability: "acme-invoices.run" }],
      ["route", { skill: "acme-invoices.run" }],
      ["search", { query: "acme-invoices agent" }],
    ] as const;
    const hits: string[] = [];
    for (const [name, args] of calls) {
      const result = await callTool(tools.get(name)!, args, ctx);
      if (!result.isError && JSON.stringify(result.structuredContent ?? result.content).includes('"acme-invoices"')) hits.push(name);
    }
    return hits;
  }

  beforeAll(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "approval-gate-"));
    writeFileSync(join(dir, "trust.json"), JSON.stringify({ tenants: { acme: { approval: "manual" } } }));
    server = await startNatsServer({ configText: AUTH_CONF, jetstream: true });
    // The subjects, bucket and stream of auth.conf are the defaults of src/config/service.ts.
    registry = await startRegistry(server.url, {
      prefix: "registry",
      bucket: "agent-registry",
      eventsStream: "REGISTRY_EVENTS",
      natsUser: "registry",
      natsPassword: authPassword("registry"),
      trustFile: join(dir, "trust.json"),
    });
    operator = await as("operator");
    const operatorNc = users.conns.at(-1)!;
    const watch = operatorNc.subscribe("registry.agent.>");
    void (async () => {
      for await (const m of watch) events.push(m.json<RegistryEvent>());
    })();
    await operatorNc.flush();
    acmeCoordinator = await as("coordinator-acme", "acme");
    // The HTTP discovery front, on the operator's connection (it queries every tenant's view).
    front = createDiscoveryServer({ config: loadDiscoveryConfig({}, {}, { httpPort: 0, publisher: "example.com" }), nc: operatorNc, client: { prefix: "registry" }, log: silentLogger });
    await front.listen();
  }, 180_000);

  afterAll(async () => {
    await front?.close();
    await users.close();
    await registry?.stop();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a new acme agent is stored pending and routed by none of acme's queries", async () => {
    const agent = await as("agent-acme-invoices", "acme");
    const reply = await agent.register({ spec: acmeSpec(), instance_id: "inv-1" });
    expect(reply.approval).toEqual({ state: "pending" });
    expect(reply.warnings.join("\n")).toMatch(/waits for an operator's approval/);
    const { agent: view } = await acmeCoordinator.get("acme-invoices", { minRevision: reply.revision });
    expect(view).toMatchObject({ approval: { state: "pending" }, instance_count: 1, status: "ready" });
    expect(await routedBy(acmeCoordinator)).toEqual([]);
    expect(await mcpFinds(acmeCoordinator)).toEqual([]);
    expect(await httpFinds()).toEqual([]);
    // The registry's web page lists it for the operator: its NATS user may read the pending list (auth.conf).
    const listed = (await (await fetch(`http://127.0.0.1:${registry.httpPort}/ui/api/approvals`)).json()) as { agents: Array<{ agent_type: string }> };
    expect(listed.agents.map((a) => a.agent_type)).toEqual(["acme-invoices"]);
    await waitFor(() => events.some((e) => e.type === "registry.agent.pending" && e.subject === "acme-invoices"), { message: "the pending event" });
  });

  it("acme's agent user and the coordinators cannot approve or list pending specs: NATS refuses them", async () => {
    const agent = await as("agent-acme-invoices", "acme");
    const shared = await as("coordinator");
    for (const client of [agent, shared, acmeCoordinator]) {
      const approve = await client.approve("acme-invoices", { by: "mallory" }).catch((e: unknown) => e);
      expect(approve).toBeInstanceOf(PermissionDeniedError);
      expect((approve as PermissionDeniedError).subject).toBe("registry.approval.approve.acme-invoices");
      expect(await client.reject("acme-invoices", { by: "mallory", reason: "x" }).catch((e: unknown) => e)).toBeInstanceOf(PermissionDeniedError);
      expect(await client.pending().catch((e: unknown) => e)).toBeInstanceOf(PermissionDeniedError);
    }
    // Nothing was decided.
    expect((await operator.pending()).agents.map((a) => [a.agent_type, a.approval?.state])).toEqual([["acme-invoices", "pending"]]);
  });

  it("the operator lists and approves it with the CLI, and then every query of acme routes to it", async () => {
    const pending = await cli("pending");
    expect(pending.stderr).toBe("");
    expect(pending.stdout).toMatch(/^AGENT TYPE +VERSION +TENANT +INSTANCES +OWNER +VERIFIED +REVISION\nacme-invoices +1\.0\.0 +acme +1 +acme-finance +no +\d+\n$/);
    const approved = await cli("approve", "acme-invoices", "--version", "1.0.0", "--by", "alice");
    expect(approved).toMatchObject({ code: 0, stderr: "" });
    expect(approved.stdout).toMatch(/^acme-invoices 1\.0\.0 \(tenant acme\) approved by alice; routable now \(revision \d+\)\n$/);
    await waitFor(async () => (await routedBy(acmeCoordinator)).length === ALL.length, { message: "routable after approval" });
    expect(await routedBy(acmeCoordinator)).toEqual(ALL);
    expect(await mcpFinds(acmeCoordinator)).toEqual(["agents_discover", "capability_lookup", "route", "search"]);
    expect(await httpFinds()).toEqual(["manifest", "agents", "agents filtered", "search", "card"]);
    await waitFor(() => events.some((e) => e.type === "registry.agent.approved"), { message: "the approved event" });
    expect(events.find((e) => e.type === "registry.agent.approved")!.data).toMatchObject({ agent_type: "acme-invoices", version: "1.0.0", tenant_scope: "acme", state: "approved", by: "alice", reason: null });
    expect(await cli("pending")).toMatchObject({ code: 0, stdout: "no specs waiting for approval\n" });
  });

  it("a changed spec of the approved type stops the type routing; the operator's rejection keeps it out, with the reason in its event", async () => {
    const agent = await as("agent-acme-invoices", "acme");
    const changed = await agent.register({ spec: acmeSpec({ version: "1.1.0", description: "acme-invoices agent, now mailing invoices out" }), instance_id: "inv-2" });
    expect(changed.approval).toEqual({ state: "pending" });
    await acmeCoordinator.get("acme-invoices", { minRevision: changed.revision });
    expect(await routedBy(acmeCoordinator)).toEqual([]);

    // A decision on the version reviewed before is refused: the stored spec is another.
    const stale = await cli("approve", "acme-invoices", "--version", "1.0.0", "--by", "alice");
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/stored spec is version 1\.1\.0, not 1\.0\.0/);

    const rejected = await cli("reject", "acme-invoices", "--by", "alice", "--reason", "mails invoices to addresses nobody vetted");
    expect(rejected).toMatchObject({ code: 0, stderr: "" });
    expect(rejected.stdout).toMatch(/^acme-invoices 1\.1\.0 \(tenant acme\) rejected by alice: mails invoices to addresses nobody vetted; not routable \(revision \d+\)\n$/);
    await waitFor(() => events.some((e) => e.type === "registry.agent.rejected"), { message: "the rejected event" });
    expect(events.find((e) => e.type === "registry.agent.rejected")!.data).toMatchObject({ version: "1.1.0", state: "rejected", by: "alice", reason: "mails invoices to addresses nobody vetted" });
    expect(await routedBy(acmeCoordinator)).toEqual([]);
    expect(await mcpFinds(acmeCoordinator)).toEqual([]);
    expect(await httpFinds()).toEqual([]);
    const list = await cli("pending", "--rejected", "--tenant", "acme");
    expect(list.stdout).toMatch(/^acme-invoices +1\.1\.0 +acme +2 +acme-finance +no +\d+ +alice: mails invoices to addresses nobody vetted$/m);
  });

  it("a shared agent (policy auto) routes at once, with no approval anywhere, as in v1.1", async () => {
    const agent = await as("agent-code-reviewer");
    const reply = await agent.register({ spec: spec("code-reviewer") as AgentSpecInput });
    expect(reply).not.toHaveProperty("approval");
    expect(reply.warnings).toEqual([]);
    const { agent: view } = await operator.get("code-reviewer", { minRevision: reply.revision });
    expect(view).not.toHaveProperty("approval");
    const coordinator = await as("coordinator");
    expect(await routedBy(coordinator, "code-reviewer")).toEqual(ALL);
    expect((await operator.pending({ tenant: null })).agents).toEqual([]);
  });
});
