/**
 * A lookup's reply as the full path builds it: the providers are serialized once and joined
 * (queries.ts), and the bytes must be what serializing the reply object gives, key order
 * included, with pages measured in UTF-8 bytes as every other list is (page.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { lookupProvider } from "../../../../src/domain/query/agent-view.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, encodeRecord, instanceKey } from "../../../../src/domain/model/records.js";
import { QueryService } from "../../../../src/service/queries/queries.js";
import { SerializedReply } from "../../../../src/service/queries/serialized-reply.js";
import { cap, makeSpec } from "../../fixtures.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
let view: RegistryView;
let revision: number;

function put(key: string, record: Parameters<typeof encodeRecord>[0]): void {
  view.apply({ key, revision: ++revision, operation: "PUT", created: 0, value: encodeRecord(record) });
}

function addAgent(agentType: string, description: string, registeredAt: number): void {
  const spec = makeSpec({ agent_type: agentType, capabilities: [{ ...cap("sum.text", { description }), input_schema: { type: "object", description: 'a "quoted" \\ field' }, output_schema: {} }] });
  put(agentKey(agentType), { kind: "agent", spec, registered_at: registeredAt, updated_at: registeredAt });
  put(instanceKey(agentType, "i1"), {
    kind: "instance", version: "1.0.0", status: "ready", registered_at: registeredAt, last_heartbeat: 0, heartbeat_interval_ms: 30_000, active_tasks: 0, metadata: {}, spec_changed: false,
  });
}

async function lookup(queries: QueryService, body: object): Promise<string> {
  const text = JSON.stringify(body);
  return dec.decode((await queries.run("lookup", body as Record<string, unknown>, null, enc.encode(text))) as Uint8Array);
}

/** The reply as serializing its object would give it. */
function expected(agentTypes: string[], nextCursor: string | null): string {
  const providers = agentTypes.map((t) => {
    const agent = view.get(t)!;
    return lookupProvider(agent, agent.spec.capabilities[0]!);
  });
  return JSON.stringify({ capability: "sum.text", providers, next_cursor: nextCursor, revision });
}

beforeEach(() => {
  view = new RegistryView();
  revision = 0;
});

describe("a lookup reply built from providers serialized one by one", () => {
  it("is byte for byte the reply object serialized, with text that JSON must escape", async () => {
    addAgent("alpha", "résumé of a text, \"quoted\", with a \u2028 line separator and 𝄞", 1);
    addAgent("beta", "plain", 2);
    const queries = new QueryService(view, async () => "reached" as const);
    expect(await lookup(queries, { capability: "sum.text" })).toBe(expected(["alpha", "beta"], null));
  });

  it("is byte for byte the reply object serialized when a page ends before the last provider", async () => {
    addAgent("alpha", "one", 1);
    addAgent("beta", "two", 2);
    const queries = new QueryService(view, async () => "reached" as const);
    const first = await lookup(queries, { capability: "sum.text", limit: 1 });
    const cursor = (JSON.parse(first) as { next_cursor: string }).next_cursor;
    expect(typeof cursor).toBe("string");
    expect(first).toBe(expected(["alpha"], cursor));
    expect(await lookup(queries, { capability: "sum.text", cursor })).toBe(expected(["beta"], null));
  });

  it("measures a page in UTF-8 bytes, not characters", async () => {
    // Each provider is about 1,300 characters and 2,300 bytes: two fit 3,000 characters, not 3,000 bytes.
    addAgent("alpha", "é".repeat(1000), 1);
    addAgent("beta", "é".repeat(1000), 2);
    const single = enc.encode(JSON.stringify(lookupProvider(view.get("alpha")!, view.get("alpha")!.spec.capabilities[0]!))).length;
    expect(single).toBeGreaterThan(2000);
    const queries = new QueryService(view, async () => "reached" as const, { maxPayload: () => 4000 });
    const reply = JSON.parse(await lookup(queries, { capability: "sum.text" })) as { providers: Array<{ agent_type: string }>; next_cursor: string | null };
    expect(reply.providers.map((p) => p.agent_type)).toEqual(["alpha"]);
    expect(reply.next_cursor).not.toBeNull();
  });
});

describe("SerializedReply", () => {
  const OPEN = `{"capability":"sum.text","note":"é"`;
  const text = (bytes: Uint8Array): string => dec.decode(bytes);

  it("sends the same bytes while the revision stands", () => {
    const reply = new SerializedReply(OPEN);
    const first = reply.close(7);
    expect(text(first)).toBe(`${OPEN},"revision":7}`);
    expect(reply.close(7)).toBe(first);
    // The cache's budget counts the open bytes and the longest tail.
    expect(reply.length).toBe(Buffer.byteLength(OPEN) + `,"revision":${Number.MAX_SAFE_INTEGER}}`.length);
  });

  it("writes a new revision of the same length over the old one, so bytes still queued go out with it", () => {
    const reply = new SerializedReply(OPEN);
    const queued = reply.close(7);
    const next = reply.close(8);
    expect(text(next)).toBe(`${OPEN},"revision":8}`);
    expect(text(queued)).toBe(`${OPEN},"revision":8}`);
  });

  it("gives a tail of another length new memory, leaving the bytes handed out whole", () => {
    const reply = new SerializedReply(OPEN);
    const nine = reply.close(9);
    const ten = reply.close(10);
    expect(text(ten)).toBe(`${OPEN},"revision":10}`);
    expect(JSON.parse(text(nine))).toEqual({ capability: "sum.text", note: "é", revision: 9 });
    // A reload starts the store's revisions again: a shorter tail must not leave digits behind.
    const afterReload = reply.close(3);
    expect(text(afterReload)).toBe(`${OPEN},"revision":3}`);
    expect(JSON.parse(text(ten))).toEqual({ capability: "sum.text", note: "é", revision: 10 });
    expect(JSON.parse(text(reply.close(1_000_000_000_123)))).toEqual({ capability: "sum.text", note: "é", revision: 1_000_000_000_123 });
  });

  it("leaves every bytes ever handed out a whole reply, with its own revision or one closed after it", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(2_000), fc.constant(-1)), { maxLength: 40 }), (steps) => {
        const reply = new SerializedReply(OPEN);
        const handedOut: Array<{ bytes: Uint8Array; at: number }> = [];
        const closedWith: number[] = [];
        let revision = 1;
        for (const step of steps) {
          // -1: a reload, which starts the revisions again; otherwise the revision moves on by step.
          revision = step === -1 ? 1 : revision + step;
          handedOut.push({ bytes: reply.close(revision), at: closedWith.length });
          closedWith.push(revision);
          for (const { bytes, at } of handedOut) {
            const seen = JSON.parse(text(bytes)) as { revision: number };
            expect({ ...seen, revision: 0 }).toEqual({ capability: "sum.text", note: "é", revision: 0 });
            expect(closedWith.slice(at)).toContain(seen.revision);
          }
        }
      }),
    );
  });
});
