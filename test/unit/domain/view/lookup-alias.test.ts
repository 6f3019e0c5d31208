/**
 * QueryService.cachedLookup: a lookup whose exact bytes were answered before is answered from
 * the cache without parsing, with the same bytes the full path gives, and never when the full
 * path would refuse, wait, or answer differently.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, encodeRecord, instanceKey } from "../../../../src/domain/model/records.js";
import { QueryService } from "../../../../src/service/queries/queries.js";
import { cap, makeSpec } from "../../fixtures.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
let view: RegistryView;
let queries: QueryService;
let revision: number;

function put(key: string, record: Parameters<typeof encodeRecord>[0]): void {
  view.apply({ key, revision: ++revision, operation: "PUT", created: 0, value: encodeRecord(record) });
}

function addAgent(agentType: string, tenant: string | null = null, version = "1.0.0"): void {
  put(agentKey(agentType), { kind: "agent", spec: makeSpec({ agent_type: agentType, version, tenant_scope: tenant, capabilities: [cap("sum.text")] }), registered_at: 0, updated_at: 0 });
  put(instanceKey(agentType, "i1"), {
    kind: "instance", version, status: "ready", registered_at: 0, last_heartbeat: 0, heartbeat_interval_ms: 30_000, active_tasks: 0, metadata: {}, spec_changed: false,
  });
}

async function full(body: string, tenant: string | null = null): Promise<string> {
  const data = enc.encode(body);
  const reply = await queries.run("lookup", JSON.parse(body) as Record<string, unknown>, tenant, data);
  return dec.decode(reply as Uint8Array);
}

const fast = (body: string, tenant: string | null = null): string | undefined => {
  const r = queries.cachedLookup(enc.encode(body), tenant);
  return r === undefined ? undefined : dec.decode(r);
};

beforeEach(() => {
  view = new RegistryView();
  queries = new QueryService(view, async () => "reached" as const);
  revision = 0;
  addAgent("alpha");
});

describe("QueryService.cachedLookup", () => {
  it("answers bytes seen before with exactly what the full path answers, revision included", async () => {
    const body = '{"capability":"sum.text"}';
    expect(fast(body)).toBeUndefined();
    const first = await full(body);
    expect(fast(body)).toBe(first);
    put(agentKey("unrelated"), { kind: "agent", spec: makeSpec({ agent_type: "unrelated", capabilities: [cap("other")] }), registered_at: 0, updated_at: 0 });
    expect(JSON.parse(fast(body)!)).toMatchObject({ revision });
    expect(fast(body)).toBe(await full(body));
  });

  it("sends the same bytes while the revision stands, and the new revision once it moves", async () => {
    const body = '{"capability":"sum.text"}';
    await full(body);
    const first = queries.cachedLookup(enc.encode(body), null)!;
    expect(queries.cachedLookup(enc.encode(body), null)).toBe(first);
    const sent = JSON.parse(dec.decode(first));
    put(agentKey("unrelated"), { kind: "agent", spec: makeSpec({ agent_type: "unrelated", capabilities: [cap("other")] }), registered_at: 0, updated_at: 0 });
    const next = queries.cachedLookup(enc.encode(body), null)!;
    // A change that leaves the lookup as it was: the same answer, with the revision it now reflects (serialized-reply.ts).
    expect(JSON.parse(dec.decode(next))).toEqual({ ...sent, revision });
    expect(revision).toBeGreaterThan(sent.revision);
  });

  it("misses once a provider of the capability changes, and the full path gives the new answer", async () => {
    const body = '{"capability":"sum.text"}';
    await full(body);
    addAgent("beta");
    expect(fast(body)).toBeUndefined();
    const fresh = await full(body);
    expect(JSON.parse(fresh).providers.map((p: { agent_type: string }) => p.agent_type)).toEqual(["alpha", "beta"]);
    expect(fast(body)).toBe(fresh);
  });

  it("keeps tenants apart: bytes answered for one tenant are not an answer for another", async () => {
    addAgent("private", "acme");
    const body = '{"capability":"sum.text"}';
    const forAcme = await full(body, "acme");
    expect(JSON.parse(forAcme).providers).toHaveLength(2);
    expect(fast(body, "acme")).toBe(forAcme);
    expect(fast(body, "other")).toBeUndefined();
    expect(fast(body)).toBeUndefined();
    expect(JSON.parse(await full(body, "other")).providers).toHaveLength(1);
  });

  it("never aliases a request that asks for min_revision, or one the full path refuses", async () => {
    const waiting = `{"capability":"sum.text","min_revision":1}`;
    await full(waiting);
    expect(fast(waiting)).toBeUndefined();
    const bad = '{"capability":"sum.text","version":"not a range"}';
    await expect(queries.run("lookup", JSON.parse(bad) as Record<string, unknown>, null, enc.encode(bad))).rejects.toMatchObject({ code: "invalid_request" });
    expect(fast(bad)).toBeUndefined();
  });

  it("tells byte strings apart that decode to the same text", async () => {
    const body = '{"capability":"sum.text"}';
    await full(body);
    const spaced = '{ "capability":"sum.text"}';
    expect(fast(spaced)).toBeUndefined();
    const invalidUtf8 = new Uint8Array([...enc.encode('{"capability":"sum.text'), 0xff, ...enc.encode('"}')]);
    expect(queries.cachedLookup(invalidUtf8, null)).toBeUndefined();
  });
});
