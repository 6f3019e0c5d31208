/**
 * Versioned schemas (PROTOCOL.md section 11.1) over a real NATS server and the SDK: a put is
 * stored once per (name, version), again is idempotent, other content is `conflict` (also
 * when two puts race); `schemas` pages, `schema` names its users; a spec whose ref does not
 * resolve is refused with the ref's path; `get` keeps the refs while `lookup`, `capabilities`,
 * `toolspec` and `check` use them inlined; a schema deleted by hand from the bucket leaves
 * lookups answering with the ref unresolved, counted.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/context.js";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { ConflictError, InvalidRequestError, LimitExceededError, NotFoundError, RegistryClient, UnavailableError, connect } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let nc: NatsConnection;
let sdk: RegistryClient;

const ADDRESS = { type: "object", properties: { city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } }, required: ["city"] };
const CUSTOMER = { type: "object", properties: { name: { type: "string" }, address: { $ref: "#Address:1.0.0" } }, required: ["name", "address"] };

async function register(agentType: string, overrides: Record<string, unknown>) {
  return raw.request(`register.${agentType}`, { spec: spec(agentType, overrides), heartbeat_interval_ms: 3_600_000 });
}

/** The bucket's revision now: a view that applied it holds every write answered before. */
async function storeRevision(): Promise<number> {
  return (await (await jetstreamManager(nc)).streams.info(`KV_${configOf(reg).bucket}`)).state.last_seq;
}

async function unresolvedRefs(): Promise<number> {
  return (await reg.metrics.schemaRefsUnresolved.get()).values[0]?.value ?? 0;
}

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { maxSchemas: 40 });
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  nc = await connect({ servers: server.url });
  sdk = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await sdk.putSchema("Address", { version: "1.0.0", schema: ADDRESS, description: "a postal address" });
  await sdk.putSchema("Customer", { version: "1.0.0", schema: CUSTOMER });
  await sdk.putSchema("Fragile", { version: "1.0.0", schema: { type: "string", minLength: 2 } });
});

afterAll(async () => {
  await nc?.close();
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

describe("schema put", () => {
  it("stores a version once: the same content again is idempotent, other content is a conflict", async () => {
    const first = await sdk.putSchema("Money", { version: "1.0.0", schema: { type: "object", properties: { amount: { type: "number" } } } });
    expect(first).toMatchObject({ name: "Money", version: "1.0.0", created: true });
    // Key order does not make other content.
    const again = await sdk.putSchema("Money", { version: "1.0.0", schema: { properties: { amount: { type: "number" } }, type: "object" } });
    expect(again).toMatchObject({ created: false, revision: first.revision });
    await expect(sdk.putSchema("Money", { version: "1.0.0", schema: { type: "string" } })).rejects.toBeInstanceOf(ConflictError);
    await expect(sdk.putSchema("Money", { version: "1.0.0", schema: { properties: { amount: { type: "number" } }, type: "object" }, description: "other" })).rejects.toThrow(/another description/);
  });

  it("lets exactly one of two racing puts of different content win; the same content racing is idempotent", async () => {
    for (let round = 0; round < 3; round++) {
      const version = `2.0.${round}`;
      const results = await Promise.allSettled([
        sdk.putSchema("Race", { version, schema: { type: "string" } }),
        sdk.putSchema("Race", { version, schema: { type: "number" } }),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(ConflictError);
      const same = await Promise.all([sdk.putSchema("Same", { version, schema: { type: "string" } }), sdk.putSchema("Same", { version, schema: { type: "string" } })]);
      expect(same.filter((r) => r.created)).toHaveLength(1);
    }
  });

  it("refuses a bad name, a version that is not exact semver, and a schema that does not compile, with paths", async () => {
    await expect(sdk.putSchema("bad.name", { version: "1.0.0", schema: {} })).rejects.toBeInstanceOf(InvalidRequestError);
    const badName = await raw.request("schema.put.-x", { version: "1.0.0", schema: {} });
    expect(badName.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "name" }] });
    for (const version of ["1.0", "^1.0.0", "1.0.0+build", "v1.0.0"]) {
      const r = await raw.request("schema.put.Versioned", { version, schema: {} });
      expect(r.body.error, version).toMatchObject({ code: "invalid_request", issues: [{ path: "version" }] });
    }
    const broken = await raw.request("schema.put.Broken", { version: "1.0.0", schema: { type: "object", properties: { a: { type: "nope" } } } });
    expect(broken.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "schema", message: expect.stringMatching(/does not compile/) }] });
    const local = await raw.request("schema.put.Local", { version: "1.0.0", schema: { $id: "x", properties: { a: { $ref: "#/definitions/a" } } } });
    expect(local.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(["schema.$id", "schema.properties.a.$ref"]);
    const missing = await raw.request("schema.put.Orphan", { version: "1.0.0", schema: { properties: { a: { $ref: "#Nowhere:1.0.0" } } } });
    expect(missing.body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "schema.properties.a", message: expect.stringMatching(/no schema Nowhere version 1\.0\.0/) }] });
  });

});

describe("schemas and schema queries", () => {
  it("lists every version by name then version in semver order, paged by limit, and of one name", async () => {
    let revision = 0;
    for (let i = 0; i < 12; i++) revision = (await sdk.putSchema("Filler", { version: `1.0.${i}`, schema: { type: "integer", minimum: i } })).revision;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      // Read your writes: every page from a view that holds the twelve versions just put.
      const page = await sdk.schemas({ limit: 7, ...(cursor ? { cursor } : {}) }, { minRevision: revision });
      expect(page.schemas.length).toBeLessThanOrEqual(7);
      seen.push(...page.schemas.map((s) => `${s.name}:${s.version}`));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain("Address:1.0.0");
    const fillers = seen.filter((s) => s.startsWith("Filler:")).map((s) => Number(s.split(".").at(-1)));
    expect(fillers).toEqual([...fillers].sort((a, b) => a - b));
    const one = await sdk.schemas({ name: "Address" });
    expect(one.schemas).toEqual([{ name: "Address", version: "1.0.0", description: "a postal address" }]);
  });

  it("answers one schema as stored, refs kept, with the agent types that use it; not_found otherwise", async () => {
    const r = await register("sq-user", { capabilities: [{ name: "crm.add", description: "adds", input_schema: { $ref: "#Customer:1.0.0" }, output_schema: {} }] });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const customer = await sdk.schema("Customer", "1.0.0", { minRevision: r.body.revision });
    expect(customer).toMatchObject({ name: "Customer", version: "1.0.0", schema: CUSTOMER, description: "", used_by: ["sq-user"], used_by_count: 1 });
    // Only direct users: sq-user refers to Customer, which refers to Address.
    expect((await sdk.schema("Address", "1.0.0")).used_by).toEqual([]);
    await expect(sdk.schema("Address", "9.0.0")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("capability schemas with refs", () => {
  let revision = 0;
  beforeAll(async () => {
    const r = await register("ref-agent", {
      capabilities: [
        { name: "crm.customer.create", description: "creates a customer", input_schema: { $ref: "#Customer:1.0.0" }, output_schema: { type: "object", properties: { shipped_to: { $ref: "#Address:1.0.0", description: "where" } } } },
      ],
    });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    revision = r.body.revision;
  });

  it("refuses a spec whose ref does not resolve, naming the ref's path", async () => {
    const r = await register("ref-missing", { capabilities: [{ name: "x.run", description: "x", input_schema: { type: "object", properties: { who: { $ref: "#Customer:2.0.0" } } }, output_schema: {} }] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "invalid_spec", issues: [{ path: "capabilities.0.input_schema.properties.who", message: expect.stringMatching(/Customer version 2\.0\.0/) }] });
  });

  it("keeps the refs in get, and inlines them in lookup, capabilities and toolspec", async () => {
    const got = await sdk.get("ref-agent", { minRevision: revision });
    expect(got.agent.capabilities[0]!.input_schema).toEqual({ $ref: "#Customer:1.0.0" });
    const inlined = { ...CUSTOMER, properties: { ...CUSTOMER.properties, address: ADDRESS } };
    const lookup = await sdk.lookup("crm.customer.create");
    expect(lookup.providers[0]!.input_schema).toEqual(inlined);
    expect(lookup.providers[0]!.output_schema).toEqual({ type: "object", properties: { shipped_to: { description: "where", allOf: [ADDRESS] } } });
    const caps = await sdk.capabilitiesAll();
    expect(caps.capabilities.find((c) => c.name === "crm.customer.create")!.input_schema).toEqual(inlined);
    const tools = await sdk.toolspec("ref-agent");
    expect(tools.tools[0]!.inputSchema).toEqual(inlined);
  });

  it("checks payloads against the inlined schema", async () => {
    const ok = await sdk.check({ capability: "crm.customer.create", payload: { name: "Ada", address: { city: "London", zip: "12345" } } });
    expect(ok).toMatchObject({ valid: true, agent_type: "ref-agent" });
    const bad = await sdk.check({ capability: "crm.customer.create", payload: { name: "Ada", address: { zip: "x" } } });
    expect(bad.errors.map((e) => e.path).sort()).toEqual(["payload.address.city", "payload.address.zip"]);
  });

  it("serves the ref unresolved, counted, when its schema was deleted from the bucket by hand; check is unavailable", async () => {
    const r = await register("ref-fragile", { capabilities: [{ name: "fragile.run", description: "f", input_schema: { $ref: "#Fragile:1.0.0" }, output_schema: {} }] });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect((await sdk.lookup("fragile.run", { minRevision: r.body.revision })).providers[0]!.input_schema).toEqual({ type: "string", minLength: 2 });
    const kv = await new Kvm(nc).open(configOf(reg).bucket);
    const before = await unresolvedRefs();
    await kv.delete("schemas.Fragile.1.0.0");
    const status = await kv.status();
    const lookup = await sdk.lookup("fragile.run", { minRevision: status.streamInfo.state.last_seq });
    expect(lookup.providers[0]!.input_schema).toEqual({ $ref: "#Fragile:1.0.0" });
    expect(await unresolvedRefs()).toBeGreaterThan(before);
    expect(reg.logs.some((l) => l.schema === "Fragile" && /missing from the store/.test(String(l.msg)))).toBe(true);
    await expect(sdk.check({ capability: "fragile.run", payload: "ab" })).rejects.toBeInstanceOf(UnavailableError);
    // Put back (a delete marker does not block the create), it resolves again.
    const put = await sdk.putSchema("Fragile", { version: "1.0.0", schema: { type: "string", minLength: 2 } });
    expect((await sdk.check({ capability: "fragile.run", payload: "a" }, { minRevision: put.revision })).valid).toBe(false);
  });
});

describe("refs in imported cards and tool specs", () => {
  it("resolves a card skill's refs, and refuses a missing one as invalid_card at the skill's path", async () => {
    const card = (input: unknown) => ({
      name: "CRM", description: "customers", version: "1.0.0", supportedInterfaces: [{ url: "https://crm.example.test/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: {}, defaultInputModes: ["application/json"], defaultOutputModes: ["application/json"],
      skills: [{ id: "crm.card.add", name: "add", description: "adds a customer", tags: ["crm"], inputSchema: input }],
    });
    const ok = await raw.request("register.ref-card", { a2a_card: card({ $ref: "#Customer:1.0.0" }) });
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    expect((await sdk.lookup("crm.card.add", { minRevision: ok.body.revision })).providers[0]!.input_schema).toMatchObject({ properties: { address: ADDRESS } });
    const missing = await raw.request("register.ref-card-missing", { a2a_card: card({ type: "object", properties: { c: { $ref: "#Customer:3.0.0" } } }) });
    expect(missing.body.error).toMatchObject({ code: "invalid_card", issues: [{ path: "a2a_card.skills.0.inputSchema.properties.c" }] });
  });

  it("resolves an MCP tool's refs beside its type object, and exports the tool inlined", async () => {
    const tools = { tools: [{ name: "add_customer", description: "adds", inputSchema: { type: "object", properties: { customer: { $ref: "#Customer:1.0.0" } } } }] };
    const r = await raw.request("register.ref-mcp", { mcp_toolspec: tools, description: "CRM tools", version: "1.0.0" });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    const got = await sdk.get("ref-mcp", { minRevision: r.body.revision });
    expect(got.agent.capabilities[0]!.input_schema).toMatchObject({ properties: { customer: { $ref: "#Customer:1.0.0" } } });
    const exported = await sdk.toolspec("ref-mcp");
    expect(exported.tools[0]!.inputSchema).toMatchObject({ type: "object", properties: { customer: { properties: { address: ADDRESS } } } });
    const bad = await raw.request("register.ref-mcp-bad", { mcp_toolspec: { tools: [{ name: "t", inputSchema: { type: "object", properties: { x: { $ref: "#Nope:1.0.0" } } } }] }, description: "x", version: "1.0.0" });
    expect(bad.body.error).toMatchObject({ code: "invalid_card", issues: [{ path: "mcp_toolspec.tools.0.inputSchema.properties.x" }] });
  });
});

describe("agent-registry schema put|list|get", () => {
  const dir = mkdtempSync(join(tmpdir(), "schema-cli-"));
  const file = (name: string, value: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };
  async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), env: {}, isTTY: false, interrupted: () => new Promise(() => {}) };
    const code = await main([...args, "--nats", server.url, "--prefix", configOf(reg).prefix], io);
    return { code, stdout: out.join(""), stderr: err.join("") };
  }

  it("puts a schema, says so when the same content is put again, and exits 1 on other content", async () => {
    const path = file("geo.json", { type: "object", required: ["lat", "lon"] });
    const first = await cli("schema", "put", "Geo", path, "--version", "1.0.0", "--description", "a point");
    expect(first, first.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining('refer to it as {"$ref": "#Geo:1.0.0"}') });
    expect((await cli("schema", "put", "Geo", path, "--version", "1.0.0", "--description", "a point")).stdout).toMatch(/already stored with this content/);
    const other = await cli("schema", "put", "Geo", file("other.json", { type: "string" }), "--version", "1.0.0", "--description", "a point");
    expect(other).toMatchObject({ code: 1, stderr: expect.stringMatching(/conflict/) });
    expect((await cli("schema", "put", "Geo", path)).code).toBe(2);
  });

  it("lists schemas as a table or JSON, and gets one with its users; 4 when not stored", async () => {
    const table = await cli("schema", "list", "--name", "Geo");
    expect(table.stdout.split("\n")[1]).toMatch(/^Geo\s+1\.0\.0\s+a point/);
    const listed = JSON.parse((await cli("schema", "list", "--json")).stdout) as { schemas: Array<{ name: string }> };
    expect(listed.schemas.some((s) => s.name === "Address")).toBe(true);
    const got = await cli("schema", "get", "Customer", "1.0.0");
    expect(got.stdout).toMatch(/used by:\s+ref-agent, ref-card, ref-mcp, sq-user/);
    expect(got.stdout).toContain('"$ref": "#Address:1.0.0"');
    expect((await cli("schema", "get", "Geo", "7.0.0")).code).toBe(4);
    expect((await cli("schema", "fetch", "Geo")).code).toBe(2);
  });
});

// Last: it fills the registry up to its limit of schema versions.
describe("the schema count limit", () => {
  it("refuses a new version past REGISTRY_MAX_SCHEMAS with limit_exceeded, and still answers puts of stored ones", async () => {
    // The count of the store as it is now (the view may not hold the last puts of the tests before): else the
    // loop below would start too low and go past the limit before its last put.
    const { schemas } = await sdk.schemasAll({}, { minRevision: await storeRevision() });
    for (let i = schemas.length; i < 40; i++) await sdk.putSchema("Filler", { version: `1.0.${i}`, schema: { type: "integer", minimum: i } });
    await expect(sdk.putSchema("Filler", { version: "9.9.9", schema: {} })).rejects.toBeInstanceOf(LimitExceededError);
    expect(await sdk.putSchema("Address", { version: "1.0.0", schema: ADDRESS, description: "a postal address" })).toMatchObject({ created: false });
  });
});
