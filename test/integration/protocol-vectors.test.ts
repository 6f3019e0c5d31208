/**
 * protocol/vectors/ against a real registry over NATS, as every client's suite runs them:
 * each spec, card, tool spec and server.json vector is registered and must be stored as it expects (read
 * back with `get`) or refused with its code and issue paths; the request vectors run against
 * a registry holding the file's schemas and fleet.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, startRegistry, type TestRegistry } from "../harness/registry.js";
import { cardVectors, requestVectors, serverVectors, specVectors, subsetMismatch, toolspecVectors, warningPaths, type SpecLikeVector } from "../unit/protocol-vectors.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

/** `register.<type>`, or the tenant's register subject for a body or spec that names a tenant_scope. */
function registerSubject(agentType: string, tenant: unknown): string {
  return typeof tenant === "string" && /^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$/.test(tenant) ? `tenant.${tenant}.register.${agentType}` : `register.${agentType}`;
}

/** Registers a body and checks the vector's verdict; a stored spec is read back with `get` (its own tenant's). */
async function run(v: SpecLikeVector, agentType: string, body: Record<string, unknown>, tenant: unknown, wire = { code: v.code, paths: v.paths }): Promise<void> {
  const r = await c.request(registerSubject(agentType, tenant), body);
  if (!v.valid) {
    expect(r.ok, JSON.stringify(r.body)).toBe(false);
    expect(r.body.error.code, JSON.stringify(r.body)).toBe(wire.code);
    const paths = (r.body.error.issues ?? []).map((i: { path: string }) => i.path);
    expect([...new Set(paths)].sort(), `issue paths ${JSON.stringify(paths)}`).toEqual([...(wire.paths ?? [])].sort());
    return;
  }
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  if (v.warnings) expect(warningPaths(r.body.warnings)).toEqual(v.warnings);
  const prefix = typeof tenant === "string" ? `tenant.${tenant}.` : "";
  const got = await c.request(`${prefix}get`, { agent_type: agentType, min_revision: r.body.revision });
  expect(got.ok, JSON.stringify(got.body)).toBe(true);
  expect(subsetMismatch(v.expect ?? {}, got.body.agent)).toBeNull();
}

describe("spec vectors", () => {
  it.each(specVectors().map((v) => [v.name, v] as const))("%s", async (_name, v) => {
    const agentType = v.register_as ?? String(v.spec["agent_type"]);
    await run(v, agentType, { spec: v.spec }, v.spec["tenant_scope"], v.wire ?? { code: v.code, paths: v.paths });
  });
});

describe("card vectors", () => {
  it.each(cardVectors().map((v) => [v.name, v] as const))("%s", async (_name, v) => {
    await run(v, v.agent_type!, { a2a_card: v.card, ...v.with }, v.with?.["tenant_scope"]);
  });
});

describe("tool spec vectors", () => {
  it.each(toolspecVectors().map((v) => [v.name, v] as const))("%s", async (_name, v) => {
    await run(v, v.agent_type!, { mcp_toolspec: v.toolspec, ...v.with }, v.with?.["tenant_scope"]);
  });
});

describe("server.json vectors", () => {
  it.each(serverVectors().map((v) => [v.name, v] as const))("%s", async (_name, v) => {
    await run(v, v.agent_type!, { mcp_server: v.server, ...v.with }, v.with?.["tenant_scope"]);
  });
});

describe("request vectors", () => {
  const file = requestVectors();
  // A registry of its own: it holds the file's schemas and fleet, and nothing of the vectors above.
  let fleetReg: TestRegistry;
  let fc: RawClient;

  beforeAll(async () => {
    fleetReg = await startRegistry(server.url);
    fc = await RawClient.connect(server.url, configOf(fleetReg).prefix);
    let revision = 0;
    for (const s of file.schemas) {
      const r = await fc.request(`schema.put.${s.name}`, { version: s.version, schema: s.schema });
      expect(r.ok, JSON.stringify(r.body)).toBe(true);
      revision = Math.max(revision, r.body.revision);
    }
    for (const spec of file.fleet) {
      const r = await fc.request(registerSubject(String(spec["agent_type"]), spec["tenant_scope"]), { spec });
      expect(r.ok, JSON.stringify(r.body)).toBe(true);
      revision = Math.max(revision, r.body.revision);
    }
    // The replica's view holds the whole fleet before the first vector runs.
    expect((await fc.request("list", { limit: 1, min_revision: revision })).ok).toBe(true);
  });

  afterAll(async () => {
    await fc?.close();
    await fleetReg?.stop();
  });

  it.each(file.vectors.map((v) => [v.name, v] as const))("%s", async (_name, v) => {
    const subject = `${v.tenant ? `tenant.${v.tenant}.` : ""}${v.subject ?? v.op}`;
    const r = await fc.request(subject, v.body_text ?? v.body);
    if ("reply" in v.expect) {
      expect(r.ok, JSON.stringify(r.body)).toBe(true);
      expect(subsetMismatch(v.expect.reply, r.body), JSON.stringify(r.body)).toBeNull();
      return;
    }
    expect(r.ok, JSON.stringify(r.body)).toBe(false);
    expect(r.body.error.code, JSON.stringify(r.body)).toBe(v.expect.error);
    if (v.expect.paths) {
      const paths = (r.body.error.issues ?? []).map((i: { path: string }) => i.path);
      expect([...new Set(paths)].sort(), `issue paths ${JSON.stringify(paths)}`).toEqual([...v.expect.paths].sort());
    }
  });
});
