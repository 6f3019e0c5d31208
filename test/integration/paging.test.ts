/**
 * Replies never outgrow NATS max_payload: every list a query carries is paged and sized against
 * the connection's real max_payload. Before, the capability projection answered `internal` from
 * about 600 realistic capabilities, and get/list/find failed once one type had 8,000 instances.
 * Here: 10,000 capabilities with realistic schemas, 10,000 instances of one type, and a server
 * whose max_payload is 64 KiB.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryClient } from "../../src/client/registry-client.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

const TYPES = 50; // plus "crowd", whose one capability makes 10,001
const CAPS_PER_TYPE = 200; // 10,000 capabilities
const INSTANCES = 10_000;

/** A schema as agents publish them: a few described properties, about 600 bytes of JSON. */
const schemaFor = (n: number) => ({
  type: "object",
  required: ["text"],
  properties: {
    text: { type: "string", description: `The text to work on, for operation ${n}, in any language the model reads.` },
    language: { type: "string", description: "ISO 639-1 code of the language of the answer; the input's language when absent." },
    max_tokens: { type: "integer", minimum: 1, maximum: 32000, description: "Upper bound of tokens in the answer." },
    style: { type: "string", enum: ["plain", "markdown", "bullet"], description: "How the answer is laid out." },
  },
});

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let sdk: RegistryClient;
let maxPayload: number;

/** A request whose reply size is checked against the server's max_payload. */
async function query(op: string, body: object): Promise<any> {
  const r = await raw.request(op, body, 20_000);
  expect(r.msg.data.length).toBeLessThanOrEqual(maxPayload);
  expect(r.ok, JSON.stringify(r.body).slice(0, 300)).toBe(true);
  return r.body;
}

/** Follows next_cursor through every page; returns the pages. */
async function allPages(op: string, body: object): Promise<any[]> {
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await query(op, cursor === undefined ? body : { ...body, cursor });
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && pages.length < 1000);
  return pages;
}

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url, { maxPayloadBytes: 1024 * 1024 });
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  sdk = new RegistryClient(raw.nc, { prefix: configOf(reg).prefix, timeoutMs: 20_000 });
  maxPayload = raw.nc.info!.max_payload;
  let n = 0;
  for (let t = 0; t < TYPES; t++) {
    const type = `wide-${String(t).padStart(2, "0")}`;
    const capabilities = Array.from({ length: CAPS_PER_TYPE }, (_, i) => ({
      name: `${type}.op-${String(i).padStart(3, "0")}`,
      description: `Operation ${i} of ${type}`,
      input_schema: schemaFor(n++),
      output_schema: { type: "object" },
      tags: ["wide"],
    }));
    const r = await raw.request(`register.${type}`, { spec: spec(type, { capabilities }), heartbeat_interval_ms: 3_600_000 }, 20_000);
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
  }
  // 10,000 instances of one type, each with a little metadata.
  let revision = 0;
  // As an agent does: a write refused 503 unavailable (here the type's spec validation budget,
  // spent by 200 registrations at once on a busy machine) is sent again after a pause.
  const register = async (body: object): Promise<{ ok: boolean; body: any }> => {
    for (let attempt = 1; ; attempt++) {
      const r = await raw.request("register.crowd", body, 30_000);
      if (r.ok || r.body?.error?.code !== "unavailable" || attempt === 20) return r;
      await new Promise((done) => setTimeout(done, 250 * attempt));
    }
  };
  const writes: Array<Promise<{ ok: boolean; body: any }>> = [];
  const settle = async () => {
    for (const r of await Promise.all(writes.splice(0))) {
      expect(r.ok, JSON.stringify(r.body)).toBe(true);
      revision = Math.max(revision, r.body.revision);
    }
  };
  for (let i = 0; i < INSTANCES; i++) {
    writes.push(register({ spec: spec("crowd"), instance_id: `c${String(i).padStart(5, "0")}`, heartbeat_interval_ms: 3_600_000, metadata: { zone: `zone-${i % 7}` } }));
    if (writes.length >= 200) await settle();
  }
  await settle();
  // Every write's revision, not the last batch's: 10,000 is a multiple of 200, so the last batch
  // was empty, the wait was for revision 0, and a loaded replica answered not_found (CI failed so).
  await query("get", { agent_type: "crowd", min_revision: revision, instances_limit: 1 });
}, 600_000);

afterAll(async () => {
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

describe("10,000 capabilities with realistic schemas", () => {
  it("pages the capability projection, every capability once, in name order", async () => {
    const pages = await allPages("capabilities", {});
    expect(pages.length).toBeGreaterThan(1);
    const names = pages.flatMap((p) => p.capabilities.map((c: any) => c.name));
    expect(names).toHaveLength(TYPES * CAPS_PER_TYPE + 1);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(names);
    expect(pages[0].capabilities.find((c: any) => c.name === "wide-00.op-000").input_schema.properties.text.type).toBe("string");
    expect(pages.at(-1).next_cursor).toBeNull();
  });

  it("a bystander's lookups are answered while a client pages through the whole projection (figures printed)", async () => {
    const bystander = await RawClient.connect(server.url, configOf(reg).prefix);
    const latencies: number[] = [];
    let paging = true;
    const lookups = (async () => {
      while (paging) {
        const t0 = performance.now();
        const r = await bystander.request("lookup", { capability: "wide-07.op-007" }, 10_000);
        latencies.push(performance.now() - t0);
        expect(r.ok).toBe(true);
      }
    })();
    const t0 = performance.now();
    const pages = await allPages("capabilities", {});
    const elapsed = performance.now() - t0;
    paging = false;
    await lookups;
    await bystander.close();
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
    const largest = Math.max(...pages.map((p) => JSON.stringify(p).length));
    console.log(
      `paging: 10,001 capabilities in ${pages.length} pages (largest ${largest} bytes, max_payload ${maxPayload}) in ${elapsed.toFixed(0)} ms; ` +
        `bystander lookups ${latencies.length}, p99 ${p99.toFixed(1)} ms; test process RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
    );
    expect(latencies.length).toBeGreaterThan(0);
  });

  it("leaves schemas out on request, in fewer pages", async () => {
    const withSchemas = await allPages("capabilities", {});
    const without = await allPages("capabilities", { schemas: false });
    expect(without.length).toBeLessThan(withSchemas.length);
    expect(without[0].capabilities[0]).not.toHaveProperty("input_schema");
    expect(without.flatMap((p) => p.capabilities)).toHaveLength(TYPES * CAPS_PER_TYPE + 1);
  });

  it("honours limit and refuses a cursor it did not issue", async () => {
    const first = await query("capabilities", { limit: 3, schemas: false });
    expect(first.capabilities).toHaveLength(3);
    const second = await query("capabilities", { limit: 3, schemas: false, cursor: first.next_cursor });
    expect(second.capabilities[0].name > first.capabilities[2].name).toBe(true);
    const bad = await raw.request("capabilities", { cursor: "not-ours!" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
  });

  it("the SDK's capabilitiesAll and discoverAll gather every page", async () => {
    const all = await sdk.capabilitiesAll();
    expect(all.capabilities).toHaveLength(TYPES * CAPS_PER_TYPE + 1);
    expect(all.next_cursor).toBeNull();
    const discovered = await sdk.discoverAll();
    expect(discovered.agents.map((a) => a.id)).toContain("wide-49");
  });

  it("find by tag pages agents that are each large", async () => {
    const pages = await allPages("find", { tag: "wide" });
    expect(pages.flatMap((p) => p.agents.map((a: any) => a.agent_type))).toHaveLength(TYPES);
  });
});

describe("10,000 instances of one agent type", () => {
  it("get pages the instances, every one once, in instance_id order", async () => {
    const first = await query("get", { agent_type: "crowd" });
    expect(first.agent.instance_count).toBe(INSTANCES);
    expect(first.agent.instances.length).toBeLessThan(INSTANCES);
    expect(first.agent.instances_next_cursor).not.toBeNull();
    const ids: string[] = first.agent.instances.map((i: any) => i.instance_id);
    let cursor = first.agent.instances_next_cursor;
    while (cursor !== null) {
      const page = await query("get", { agent_type: "crowd", instances_cursor: cursor });
      ids.push(...page.agent.instances.map((i: any) => i.instance_id));
      cursor = page.agent.instances_next_cursor;
    }
    expect(ids).toHaveLength(INSTANCES);
    expect(new Set(ids).size).toBe(INSTANCES);
    expect([...ids].sort()).toEqual(ids);
    expect((await sdk.getAll("crowd")).agent.instances).toHaveLength(INSTANCES);
  });

  it("list, even with limit 1, and find by name answer with the instances cut to fit", async () => {
    const listed = await query("list", { limit: 1, cursor: Buffer.from("crowc").toString("base64url") });
    expect(listed.agents[0].agent_type).toBe("crowd");
    expect(listed.agents[0].instance_count).toBe(INSTANCES);
    expect(listed.agents[0].instances_next_cursor).not.toBeNull();
    const found = await query("find", { name: "crowd" });
    expect(found.agents).toHaveLength(1);
    expect(found.agents[0].instances.length).toBeGreaterThan(0);
  });

  it("instances_limit bounds a page by count", async () => {
    const r = await query("get", { agent_type: "crowd", instances_limit: 5 });
    expect(r.agent.instances.map((i: any) => i.instance_id)).toEqual(["c00000", "c00001", "c00002", "c00003", "c00004"]);
  });

  it("list by agent_types (v1.2) gives those agents in one reply, each cut to instances_limit", async () => {
    const r = await query("list", { agent_types: ["wide-03", "crowd", "no-such-agent", "wide-01"], instances_limit: 2 });
    expect(r.agents.map((a: any) => a.agent_type)).toEqual(["crowd", "wide-01", "wide-03"]);
    expect(r.next_cursor).toBeNull();
    const crowd = r.agents[0];
    expect(crowd.instances.map((i: any) => i.instance_id)).toEqual(["c00000", "c00001"]);
    expect(crowd.instance_count).toBe(INSTANCES);
    expect(crowd.instances_next_cursor).not.toBeNull();
    // A limit pages the named agents by count, the cursor in agent_type order.
    const first = await query("list", { agent_types: ["wide-03", "crowd", "wide-01"], instances_limit: 2, limit: 2 });
    expect(first.agents.map((a: any) => a.agent_type)).toEqual(["crowd", "wide-01"]);
    const rest = await query("list", { agent_types: ["wide-03", "crowd", "wide-01"], instances_limit: 2, limit: 2, cursor: first.next_cursor });
    expect(rest.agents.map((a: any) => a.agent_type)).toEqual(["wide-03"]);
    expect(rest.next_cursor).toBeNull();
  });
});

describe("a server with a 64 KiB max_payload", () => {
  it("sizes pages to that server's limit, not to a constant", async () => {
    await using small = await withNatsServer({ configText: "max_payload: 65536" });
    await using smallReg = await startRegistry(small.url, { maxPayloadBytes: 32 * 1024 });
    const c = await RawClient.connect(small.url, configOf(smallReg).prefix);
    try {
      expect(c.nc.info!.max_payload).toBe(65536);
      let revision = 0;
      for (let t = 0; t < 40; t++) {
        const type = `small-${String(t).padStart(2, "0")}`;
        const capabilities = Array.from({ length: 5 }, (_, i) => ({ name: `${type}.op-${i}`, description: "d", input_schema: schemaFor(i), output_schema: {} }));
        // One capability every type offers, with a large schema: its lookup outgrows one reply.
        capabilities.push({ name: "shared.op", description: "x".repeat(1500), input_schema: schemaFor(t), output_schema: {} });
        const r = await c.request(`register.${type}`, { spec: spec(type, { capabilities }) });
        expect(r.ok, JSON.stringify(r.body)).toBe(true);
        revision = r.body.revision;
      }
      const names: string[] = [];
      const sizes: number[] = [];
      let cursor: string | undefined;
      do {
        // Read your writes: every page from a view that holds the 40 registrations.
        const r = await c.request("capabilities", cursor === undefined ? { min_revision: revision } : { cursor, min_revision: revision });
        expect(r.ok).toBe(true);
        sizes.push(r.msg.data.length);
        names.push(...r.body.capabilities.map((x: any) => x.name));
        cursor = r.body.next_cursor ?? undefined;
      } while (cursor !== undefined);
      expect(names).toHaveLength(201);
      expect(sizes.length).toBeGreaterThan(1);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(65536);

      const first = await c.request("lookup", { capability: "shared.op" });
      expect(first.ok).toBe(true);
      expect(first.msg.data.length).toBeLessThanOrEqual(65536);
      expect(first.body.providers.length).toBeLessThan(40);
      expect(first.body.next_cursor).not.toBeNull();
      const all = await new RegistryClient(c.nc, { prefix: configOf(smallReg).prefix }).lookupAll("shared.op");
      // Lookup order (registration order here), every provider once.
      expect(all.providers.map((p) => p.agent_type)).toEqual(Array.from({ length: 40 }, (_, t) => `small-${String(t).padStart(2, "0")}`));
    } finally {
      await c.close();
    }
  });
});
