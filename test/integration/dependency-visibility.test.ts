/**
 * Tenant visibility of every op that walks the dependency graph (PROTOCOL.md section 11.2,
 * docs/protocol.md section 8): a dependency on another tenant's agent resolves as `get` sees
 * it, so to tenant alpha (and to the shared view) tenant bravo's agents are `missing`, and
 * nothing of their specs (description, owner, subject, tenant, models, their own
 * dependencies, the server a tool is found on) reaches a reply: not `graph` (either
 * direction, one agent or the fleet), not `sbom` (one agent or the fleet, CycloneDX and
 * SPDX), not `check`, not a register reply, not a dependency event. Bravo itself sees all of
 * it, which shows the markers would be seen if they leaked.
 *
 * Everything only bravo may know carries the word "bravo"; nothing alpha or the shared view
 * may know does, so a reply leaks exactly when its JSON contains it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, NotFoundError, RegistryClient } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry, registerSubject } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let nc: NatsConnection;
let shared: RegistryClient;
let alpha: RegistryClient;
let bravo: RegistryClient;
const replies = new Map<string, any>();
let lastRevision = 0;

const MARK = /bravo/i;
/** What bravo's own view shows of its agents, and neither alpha's nor the shared one may. */
const BRAVO_DATA = ["bravo ledger: private books", "bravo-finance", "bravo.ledger.tasks", "bravo-model-7", "vis-bravo-vault", "vis-bravo-tools", "bravo lookup tool"];

const agent = (name: string) => ({ type: "agent", name, version: "1.0.0" });
const tool = (name: string) => ({ type: "tool", name, version: "1.0.0" });

async function register(agentType: string, overrides: Record<string, unknown> = {}) {
  const r = await raw.request(registerSubject(agentType, overrides), { spec: spec(agentType, overrides), instance_id: "i1", heartbeat_interval_ms: 3_600_000 });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  replies.set(agentType, r.body);
  lastRevision = Math.max(lastRevision, r.body.revision);
}

/** Neither tenant bravo's data nor its name anywhere in the reply. */
function expectNothingOfBravo(reply: unknown, what: string): void {
  expect(JSON.stringify(reply), what).not.toMatch(MARK);
}

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  nc = await connect({ servers: server.url });
  const prefix = configOf(reg).prefix;
  shared = new RegistryClient(nc, { prefix });
  alpha = new RegistryClient(nc, { prefix, tenant: "alpha" });
  bravo = new RegistryClient(nc, { prefix, tenant: "bravo" });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });

  const bravoCap = (name: string, description: string) => ({ name, description, input_schema: { type: "object" }, output_schema: {} });
  await register("vis-common");
  // The vault depends on alpha's vis-loop (registered last, below), which bravo finds missing.
  await register("vis-bravo-vault", { tenant_scope: "bravo", owner_team: "bravo-vault-team", description: "bravo vault", nats_subject: "bravo.vault", capabilities: [bravoCap("vis-bravo-vault.keep", "bravo keeps")], depends: [agent("vis-loop")] });
  await register("vis-ledger", {
    tenant_scope: "bravo",
    description: "bravo ledger: private books",
    owner_team: "bravo-finance",
    nats_subject: "bravo.ledger.tasks",
    capabilities: [bravoCap("vis-ledger.post", "bravo posting")],
    providers: [{ id: "bravo-llm", kind: "llm", models: ["bravo-model-7"] }],
    depends: [agent("vis-bravo-vault")],
  });
  await register("vis-bravo-tools", {
    tenant_scope: "bravo",
    kind: "mcp_server",
    description: "bravo tools",
    owner_team: "bravo-tools-team",
    nats_subject: "bravo.tools",
    url: "https://bravo.example/mcp",
    capabilities: [bravoCap("vis-lookup", "bravo lookup tool")],
  });
  await register("vis-bravo-auditor", { tenant_scope: "bravo", owner_team: "bravo-audit", description: "bravo auditor", nats_subject: "bravo.auditor", depends: [agent("vis-ledger"), tool("vis-lookup"), agent("vis-common")] });
  // Alpha (and a shared agent) declare dependencies on bravo's agent and on the tool only a bravo server provides.
  await register("vis-planner", { tenant_scope: "alpha", depends: [agent("vis-ledger"), tool("vis-lookup"), agent("vis-common"), agent("vis-nobody")] });
  await register("vis-report", { depends: [agent("vis-ledger"), tool("vis-lookup")] });
  // Alpha's vis-loop depends on vis-ledger: a cycle vis-loop -> vis-ledger -> vis-bravo-vault ->
  // vis-loop if the registration's cycle search crossed tenants, none as alpha sees the fleet.
  await register("vis-loop", { tenant_scope: "alpha", depends: [agent("vis-ledger")] });
  // Every query below is answered from a view that holds all of these.
  await shared.get("vis-common", { minRevision: lastRevision });
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

describe("sbom", () => {
  it("of one agent lists another tenant's agent exactly as a missing dependency, in CycloneDX and SPDX", async () => {
    const cdx: any = await alpha.sbom({ agent_type: "vis-planner" });
    expectNothingOfBravo(cdx, "alpha's CycloneDX of vis-planner");
    const component = (name: string) => cdx.components.find((c: any) => c.name === name);
    const asMissing = (c: any) => ({ ...c, name: "?", "bom-ref": "?" });
    // Bravo's agent reads as vis-nobody, which nobody registered: the declaration, state missing.
    expect(asMissing(component("vis-ledger"))).toEqual(asMissing(component("vis-nobody")));
    expect(component("vis-ledger")).toEqual({
      type: "application",
      "bom-ref": "agent:vis-ledger@1.0.0",
      name: "vis-ledger",
      version: "1.0.0",
      properties: [
        { name: "agent-registry:kind", value: "agent" },
        { name: "agent-registry:state", value: "missing" },
      ],
    });
    const deps = Object.fromEntries(cdx.dependencies.map((d: any) => [d.ref, d.dependsOn]));
    expect(deps["agent:vis-ledger@1.0.0"]).toEqual([]);
    expect(deps["tool:vis-lookup@1.0.0"]).toEqual([]);
    // What alpha may see is still there: the shared agent it depends on.
    expect(component("vis-common").description).toBe("vis-common agent");

    const spdx: any = await alpha.sbom({ agent_type: "vis-planner", format: "spdx" });
    expectNothingOfBravo(spdx, "alpha's SPDX of vis-planner");
    const pkg = (name: string) => spdx.packages.find((p: any) => p.name === name);
    expect(pkg("vis-ledger")).toMatchObject({ versionInfo: "1.0.0", comment: "an agent of the agent registry (agent:vis-ledger@1.0.0), missing" });
    expect(pkg("vis-ledger").supplier).toBeUndefined();

    for (const format of ["cyclonedx", "spdx"] as const) expectNothingOfBravo(await shared.sbom({ agent_type: "vis-report", format }), `the shared ${format} of vis-report`);

    // Bravo sees its own agents in full.
    for (const format of ["cyclonedx", "spdx"] as const) {
      const own = JSON.stringify(await bravo.sbom({ agent_type: "vis-bravo-auditor", format }));
      for (const data of BRAVO_DATA) expect(own, `bravo's ${format}`).toContain(data);
    }
    const own: any = await bravo.sbom({ agent_type: "vis-bravo-auditor" });
    expect(own.components.find((c: any) => c.name === "vis-ledger").properties).toContainEqual({ name: "agent-registry:tenant", value: "bravo" });
  });

  it("of the fleet shows none of another tenant's agents, in CycloneDX and SPDX", async () => {
    for (const format of ["cyclonedx", "spdx"] as const) {
      expectNothingOfBravo(await alpha.sbom({ format }), `alpha's fleet ${format}`);
      expectNothingOfBravo(await shared.sbom({ format }), `the shared fleet ${format}`);
      const own = JSON.stringify(await bravo.sbom({ format }));
      for (const data of BRAVO_DATA) expect(own, `bravo's fleet ${format}`).toContain(data);
    }
  });

  it("of another tenant's agent is not_found", async () => {
    await expect(alpha.sbom({ agent_type: "vis-ledger" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(shared.sbom({ agent_type: "vis-ledger", format: "spdx" })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("graph", () => {
  it("of one agent, either direction, and of the fleet, shows another tenant's agents as missing and nothing past them", async () => {
    const down = await alpha.graph({ agent_type: "vis-planner" });
    expectNothingOfBravo(down, "alpha's graph of vis-planner");
    expect(Object.fromEntries(down.nodes.map((n) => [n.id, n.state]))).toEqual({
      "agent:vis-planner@1.0.0": "live",
      "agent:vis-ledger@1.0.0": "missing",
      "tool:vis-lookup@1.0.0": "missing",
      "agent:vis-common@1.0.0": "live",
      "agent:vis-nobody@1.0.0": "missing",
    });
    expectNothingOfBravo(await alpha.graph({ agent_type: "vis-common", direction: "dependents" }), "alpha's dependents of vis-common");
    expectNothingOfBravo(await alpha.graph(), "alpha's fleet graph");
    expectNothingOfBravo(await shared.graph({ agent_type: "vis-report" }), "the shared graph of vis-report");
    expectNothingOfBravo(await shared.graph({ agent_type: "vis-common", direction: "dependents" }), "the shared dependents of vis-common");
    expectNothingOfBravo(await shared.graph(), "the shared fleet graph");
    await expect(alpha.graph({ agent_type: "vis-ledger" })).rejects.toBeInstanceOf(NotFoundError);

    const own = await bravo.graph({ agent_type: "vis-bravo-auditor" });
    expect(own.nodes.find((n) => n.id === "agent:vis-ledger@1.0.0")?.state).toBe("live");
    expect(own.nodes.map((n) => n.id)).toEqual(expect.arrayContaining(["agent:vis-bravo-vault@1.0.0", "mcp_server:vis-bravo-tools@1.0.0"]));
    expect((await bravo.graph({ agent_type: "vis-common", direction: "dependents" })).nodes.map((n) => n.id)).toContain("agent:vis-bravo-auditor@1.0.0");
  });
});

describe("check and register", () => {
  it("check finds no capability only another tenant provides", async () => {
    const refused = await alpha.check({ capability: "vis-lookup", payload: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotFoundError);
    expectNothingOfBravo((refused as Error).message, "alpha's check of vis-lookup");
    await expect(shared.check({ capability: "vis-lookup", payload: {} })).rejects.toBeInstanceOf(NotFoundError);
    await expect(alpha.check({ capability: "vis-lookup", agent_type: "vis-bravo-tools", payload: {} })).rejects.toBeInstanceOf(NotFoundError);
    expect(await bravo.check({ capability: "vis-lookup", payload: {} })).toMatchObject({ valid: true, agent_type: "vis-bravo-tools" });
  });

  it("a register reply warns of another tenant's agent as missing, and no cycle is found through it", () => {
    expectNothingOfBravo(replies.get("vis-planner"), "vis-planner's register reply");
    expect(replies.get("vis-planner").warnings).toEqual(expect.arrayContaining(["depends.0: agent:vis-ledger@1.0.0 is missing", "depends.1: tool:vis-lookup@1.0.0 is missing"]));
    expectNothingOfBravo(replies.get("vis-report"), "vis-report's register reply");
    expectNothingOfBravo(replies.get("vis-loop"), "vis-loop's register reply");
    // Bravo's own dependency on vis-ledger resolves (no warning for it).
    expect(replies.get("vis-bravo-auditor").warnings ?? []).not.toContainEqual(expect.stringContaining("vis-ledger"));
  });
});

describe("dependency events", () => {
  it("go to the tenant that can see the dependency, not to those that cannot", async () => {
    const lost = await raw.request("deregister.vis-ledger.i1", { reason: "maintenance" });
    expect(lost.ok).toBe(true);
    await register("vis-ledger", {
      tenant_scope: "bravo",
      description: "bravo ledger: private books",
      owner_team: "bravo-finance",
      nats_subject: "bravo.ledger.tasks",
      capabilities: [{ name: "vis-ledger.post", description: "bravo posting", input_schema: { type: "object" }, output_schema: {} }],
      providers: [{ id: "bravo-llm", kind: "llm", models: ["bravo-model-7"] }],
      depends: [agent("vis-bravo-vault")],
    });
    const stream = configOf(reg).eventsStream;
    const depEvents = async () => (await readStoredEvents(nc, stream)).filter((e) => e.event.type.includes("dependency"));
    // Events are stored in store order: once bravo's restored event is there, every event of both transitions is.
    await waitFor(async () => (await depEvents()).some((e) => e.event.subject === "vis-bravo-auditor" && e.event.type.endsWith("restored")), { message: "bravo's dependency events stored" });
    const events = await depEvents();
    expect(events.map((e) => [e.event.subject, e.event.type, e.event.data.node])).toEqual([
      ["vis-bravo-auditor", "registry.agent.dependency_lost", "agent:vis-ledger@1.0.0"],
      ["vis-bravo-auditor", "registry.agent.dependency_restored", "agent:vis-ledger@1.0.0"],
    ]);
  });
});
