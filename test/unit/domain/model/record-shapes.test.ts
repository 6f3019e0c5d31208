import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentSpecSchema } from "../../../../src/domain/spec/spec.js";
import { encodeRecord, readAgentRecord, readInstanceRecord, type AgentRecord } from "../../../../src/domain/model/records.js";
import { agentRecord, badRecord, liveRecord } from "../../../harness/bad-records.js";
import { makeSpec } from "../../fixtures.js";

const enc = new TextEncoder();
const bytes = (v: unknown): Uint8Array => enc.encode(JSON.stringify(v));

describe("reading records from the store", () => {
  it("reads every record the registry writes, optional fields included", () => {
    const full = agentSpecSchema.parse({
      ...makeSpec({ agent_type: "full" }),
      runtime: "node",
      acp_port: 8080,
      url: "https://example.com",
      weight: 2.5,
      tenant_scope: "acme",
      reflection_config: { enabled: true },
      providers: [{ id: "p", kind: "llm", models: ["m"], capabilities: { streaming: true }, displayName: "P", description: "d" }],
      depends: [{ type: "agent", name: "other", version: "1.0.0", capability: "cap.b" }],
      a2a_card: { name: "full" },
      capabilities: [{ name: "cap.a", description: "a", input_schema: true, output_schema: { type: "object" }, confidence_hint: 0.5, tags: ["t"], examples: ["e"] }],
    });
    const record: AgentRecord = { kind: "agent", spec: full, registered_at: 1, updated_at: 2, static: true };
    expect(readAgentRecord(encodeRecord(record), "full")).toEqual(record);
    expect(readAgentRecord(bytes(agentRecord("x")), "x")).toMatchObject({ kind: "agent" });
    expect(readInstanceRecord(bytes(liveRecord()))).toMatchObject({ kind: "instance" });
    const gone = { kind: "gone", version: "", reason: "evicted", at: 5, registered_at: 1, last_heartbeat: 2 };
    expect(readInstanceRecord(bytes(gone))).toEqual(gone);
  });

  it("keeps what a newer writer added to a record it can otherwise read", () => {
    const r = readAgentRecord(bytes({ ...agentRecord("x"), future: { a: 1 } }), "x");
    expect(r).toMatchObject({ future: { a: 1 } });
  });

  it("says what is wrong, with its path", () => {
    const caps = agentRecord("x");
    caps["spec"].capabilities = "abc";
    expect(readAgentRecord(bytes(caps), "x")).toBe("spec.capabilities: not an array");
    const tags = agentRecord("x");
    tags["spec"].capabilities[0].tags = [1];
    expect(readAgentRecord(bytes(tags), "x")).toBe("spec.capabilities.0.tags.0: not a string");
    expect(readAgentRecord(bytes(agentRecord("x")), "y")).toBe("spec.agent_type: not the agent type of its key");
    expect(readAgentRecord(enc.encode("{"), "x")).toBe("not JSON");
    expect(readAgentRecord(enc.encode("[1]"), "x")).toBe("not a JSON object");
    expect(readAgentRecord(enc.encode('{"kind":"agent","spec":{},"registered_at":1e999,"updated_at":1}'), "x")).toMatch(/^spec\.agent_type/);
    // JSON.parse reads 1e999 as Infinity.
    expect(readInstanceRecord(enc.encode(JSON.stringify(liveRecord()).replace('"last_heartbeat":1', '"last_heartbeat":1e999')))).toBe("last_heartbeat: not a finite number");
    expect(readInstanceRecord(bytes({ ...liveRecord(), version: "one" }))).toBe("version: not a semver version");
    expect(readInstanceRecord(bytes({ ...liveRecord(), kind: "instance.v2" }))).toBe("kind: neither instance nor gone");
  });

  it("never throws and never lets a bad record through (property)", () => {
    fc.assert(
      fc.property(badRecord, (bad) => {
        const type = bad.key.split(".")[1] ?? "";
        const r = bad.key.startsWith("agents.") ? readAgentRecord(bad.value, type) : readInstanceRecord(bad.value);
        expect(typeof r, `${bad.label} under ${bad.key}`).toBe("string");
      }),
      { numRuns: 2_000, seed: 14_002 },
    );
    fc.assert(
      fc.property(fc.uint8Array(), (b) => {
        expect(typeof readInstanceRecord(b)).toBe("string");
        expect(typeof readAgentRecord(b, "x")).toBe("string");
      }),
    );
  });
});
