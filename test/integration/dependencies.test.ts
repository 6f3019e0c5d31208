/**
 * Dependencies (PROTOCOL.md section 11.2) through NATS and the SDK: a registration that would
 * close a cycle is refused naming it, one whose dependencies are not live is accepted with a
 * warning per dependency; `graph` answers dependencies and dependents with each node's state
 * (a tenant sees only its view); a dependency that stops being live, or comes back, is one
 * stored event for the agent that declared it, published by the replica that holds the lease.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, InvalidRequestError, InvalidSpecError, NotFoundError, RegistryClient } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry, registerSubject } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { ensureBuilt, runCli } from "../harness/cli.js";

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let nc: NatsConnection;
let sdk: RegistryClient;

const agent = (name: string, version = "1.0.0") => ({ type: "agent", name, version });

async function register(agentType: string, overrides: Record<string, unknown> = {}, instance = "i1") {
  const r = await raw.request(registerSubject(agentType, overrides), { spec: spec(agentType, overrides), instance_id: instance, heartbeat_interval_ms: 3_600_000 });
  return r;
}

beforeAll(async () => {
  await ensureBuilt();
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  nc = await connect({ servers: server.url });
  sdk = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

it("accepts dependencies that are not live yet, warning of each, and refuses a cycle naming it", async () => {
  const first = await register("dep-api", { depends: [agent("dep-db"), { type: "tool", name: "dep.fetch", version: "1.0.0" }] });
  expect(first.ok, JSON.stringify(first.body)).toBe(true);
  expect(first.body.warnings).toEqual(["depends.0: agent:dep-db@1.0.0 is missing", "depends.1: tool:dep.fetch@1.0.0 is missing"]);

  const db = await register("dep-db", { depends: [agent("dep-cache")] });
  expect(db.ok).toBe(true);
  const cycle = await register("dep-cache", { depends: [agent("dep-api")] });
  expect(cycle.status).toBe(400);
  expect(cycle.body.error).toMatchObject({
    code: "invalid_spec",
    issues: [{ path: "depends.0", message: "closes the dependency cycle dep-cache -> dep-api -> dep-db -> dep-cache" }],
  });
  // Nothing of the refused spec was stored.
  await expect(sdk.get("dep-cache")).rejects.toBeInstanceOf(NotFoundError);
  await expect(sdk.register({ spec: spec("dep-self", { depends: [agent("dep-self")] }) as never })).rejects.toBeInstanceOf(InvalidSpecError);
});

it("answers the graph both ways with each node's state, tenant-scoped", async () => {
  await register("dep-cache");
  const tools = await register("dep-tools", { kind: "mcp_server", capabilities: [{ name: "dep.fetch", description: "fetches", input_schema: {}, output_schema: {} }] });
  // Read your writes: every node is live once the view holds the two registrations above.
  const down = await sdk.graph({ agent_type: "dep-api" }, { minRevision: tools.body.revision });
  expect(down.nodes.map((n) => [n.id, n.state])).toEqual([
    ["agent:dep-api@1.0.0", "live"],
    ["agent:dep-db@1.0.0", "live"],
    ["tool:dep.fetch@1.0.0", "live"],
    ["mcp_server:dep-tools@1.0.0", "live"],
    ["agent:dep-cache@1.0.0", "live"],
  ]);
  expect(down.problems).toEqual([]);
  expect(down.revision).toBeGreaterThan(0);

  const up = await sdk.graph({ agent_type: "dep-cache", direction: "dependents", depth: 1 });
  expect(up.edges).toEqual([{ from: "agent:dep-db@1.0.0", to: "agent:dep-cache@1.0.0", capability: null }]);

  // A tenant's agent is missing to shared agents and unknown to the shared view.
  await register("dep-secret", { tenant_scope: "acme" });
  const report = await register("dep-report", { depends: [agent("dep-secret")] });
  expect((await sdk.graph({ agent_type: "dep-report" }, { minRevision: report.body.revision })).problems).toMatchObject([{ code: "missing", path: "dep-report.depends.0" }]);
  await expect(sdk.graph({ agent_type: "dep-secret" })).rejects.toBeInstanceOf(NotFoundError);
  const tenantView = new RegistryClient(nc, { prefix: configOf(reg).prefix, tenant: "acme" });
  expect((await tenantView.graph({ agent_type: "dep-secret", direction: "dependents" })).nodes.map((n) => n.id)).toEqual(["agent:dep-secret@1.0.0"]);

  const bad = await raw.request("graph", { direction: "sideways", depth: 99 });
  expect(bad.status).toBe(400);
  expect(bad.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(["depth", "direction"]);
  await expect(sdk.graph({ agent_type: "Not A Type" })).rejects.toBeInstanceOf(InvalidRequestError);
});

it("stores one event when a dependency stops being live and one when it is back", async () => {
  await register("dep-store");
  await register("dep-user", { depends: [agent("dep-store")] });
  const lost = await raw.request("deregister.dep-store.i1", { reason: "maintenance" });
  expect(lost.ok).toBe(true);
  const back = await register("dep-store");
  const stream = configOf(reg).eventsStream;
  const depEvents = async () => (await readStoredEvents(nc, stream)).filter((e) => e.event.subject === "dep-user" && e.event.type.includes("dependency"));
  await waitFor(async () => (await depEvents()).length >= 2, { message: "both dependency events stored" });
  const events = await depEvents();
  expect(events.map((e) => [e.subject, e.event.data.state, e.event.data.node])).toEqual([
    [`${configOf(reg).prefix}.agent.dependency_lost.dep-user`, "deregistered", "agent:dep-store@1.0.0"],
    [`${configOf(reg).prefix}.agent.dependency_restored.dep-user`, "live", "agent:dep-store@1.0.0"],
  ]);
  expect(events[0]!.event.data).toMatchObject({ agent_type: "dep-user", dependency: agent("dep-store"), providers: ["dep-store"], revision: lost.body.revision });
  expect(events[1]!.event.data.revision).toBe(back.body.revision);
});

it("agent-registry graph prints the tree with states, warnings after it, and exits 0 when no problem is an error", async () => {
  const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
  const down = await runCli(["graph", "dep-api"], env);
  expect(down.code, down.stderr).toBe(0);
  expect(down.stdout.trimEnd().split("\n")).toEqual([
    "agent:dep-api@1.0.0  live",
    "├─ agent:dep-db@1.0.0  live",
    "│  └─ agent:dep-cache@1.0.0  live",
    "└─ tool:dep.fetch@1.0.0  live",
    "   └─ mcp_server:dep-tools@1.0.0  live  (dep.fetch)",
  ]);
  const up = await runCli(["graph", "dep-cache", "--dependents"], env);
  expect(up.stdout.trimEnd().split("\n")).toEqual(["agent:dep-cache@1.0.0  live", "└─ agent:dep-db@1.0.0  live", "   └─ agent:dep-api@1.0.0  live"]);
  expect((await runCli(["graph", "dep-report"], env)).stdout).toContain("warning missing dep-report.depends.0: agent:dep-secret@1.0.0, a dependency of dep-report, is not registered");
  expect(await runCli(["graph", "--depth", "0", "dep-api"], env)).toMatchObject({ code: 2, stdout: "" });
  expect((await runCli(["graph", "nobody"], env)).code).toBe(4);
  const json = JSON.parse((await runCli(["graph", "--json"], env)).stdout);
  expect(json.problems.filter((p: { severity: string }) => p.severity === "error")).toEqual([]);
});
