/**
 * The diff behind the `conflict` of PROTOCOL.md section 9: which top-level fields and which
 * capabilities differ, said in a message of bounded length.
 */
import { describe, expect, it } from "vitest";
import { describeDiff, MAX_DIFF_MESSAGE, specDiff } from "../../../../src/domain/spec/spec-diff.js";
import { cap, makeSpec } from "../../fixtures.js";

describe("specDiff", () => {
  it("finds nothing between a spec and itself, whatever the order of its keys", () => {
    const spec = makeSpec({ tags: { a: "1", b: "2" } });
    const shuffled = { ...spec, tags: { b: "2", a: "1" } };
    expect(specDiff(spec, shuffled)).toEqual({ fields: [], capabilities: null });
  });

  it("names differing top-level fields, optional ones that appear or go included", () => {
    const stored = makeSpec({ runtime: "node" });
    const next = makeSpec({ description: "other", weight: 2, url: "http://x" });
    expect(specDiff(stored, next).fields).toEqual(["description", "runtime", "weight", "url"]);
  });

  it("sorts capabilities into changed, added and removed by name", () => {
    const stored = makeSpec({ capabilities: [cap("a.one"), cap("a.two"), cap("a.three")] });
    const next = makeSpec({ capabilities: [cap("a.one", { tags: ["x"] }), cap("a.three"), cap("a.four")] });
    expect(specDiff(stored, next).capabilities).toEqual({ changed: ["a.one"], added: ["a.four"], removed: ["a.two"], reordered: false });
  });
});

describe("describeDiff", () => {
  it("lists a few names of each kind and counts the rest", () => {
    const names = Array.from({ length: 12 }, (_, i) => `cap.n${i}`);
    const stored = makeSpec({ capabilities: [cap("cap.old")] });
    const next = makeSpec({ capabilities: names.map((n) => cap(n)) });
    expect(describeDiff(specDiff(stored, next))).toBe("capabilities (added: cap.n0, cap.n1, cap.n2, cap.n3, cap.n4 and 7 more; removed: cap.old)");
  });

  it("stays within its bound however long the names", () => {
    const long = (i: number) => `${"x".repeat(250)}.c${i}`;
    const stored = makeSpec({ capabilities: Array.from({ length: 6 }, (_, i) => cap(long(i))) });
    const next = makeSpec({ capabilities: Array.from({ length: 6 }, (_, i) => cap(long(i + 10))), description: "d" });
    const text = describeDiff(specDiff(stored, next));
    expect(text.length).toBeLessThanOrEqual(MAX_DIFF_MESSAGE);
    expect(text.startsWith("description, capabilities (added: ")).toBe(true);
    expect(text).toContain("and 1 more");
  });
});
