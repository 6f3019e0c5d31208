import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { instanceKey, parseKey } from "../../../../src/domain/model/records.js";

/** What an instance key meant when it was read with a split: exactly two non-empty parts. */
function bySplit(key: string): ReturnType<typeof parseKey> {
  const rest = key.slice("instances.".length).split(".");
  return rest.length === 2 && rest[0] && rest[1] ? { kind: "instance", agentType: rest[0], instanceId: rest[1] } : { kind: "unknown" };
}

describe("parseKey, instance keys", () => {
  it("reads any key under instances. as two cuts at the dots read it with a split", () => {
    // Dots, empty parts and leading or trailing dots are what the cuts must get right.
    const tail = fc.string({ unit: fc.constantFrom("a", "b", "-", "_", ".", "7"), maxLength: 12 });
    fc.assert(fc.property(tail, (t) => {
        expect(parseKey(`instances.${t}`)).toEqual(bySplit(`instances.${t}`));
      }), { numRuns: 2000 });
  });

  it("gives back the agent type and instance id an instance key was made of", () => {
    expect(parseKey(instanceKey("billing-agent", "i-42"))).toEqual({ kind: "instance", agentType: "billing-agent", instanceId: "i-42" });
    expect(parseKey("instances.a.b.c")).toEqual({ kind: "unknown" });
    expect(parseKey("instances..b")).toEqual({ kind: "unknown" });
    expect(parseKey("instances.a.")).toEqual({ kind: "unknown" });
    expect(parseKey("instances.a")).toEqual({ kind: "unknown" });
  });
});
