import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, jsonBytes, takePage, utf8Length } from "../../../../src/domain/query/page.js";
import { RegistryError } from "../../../../src/domain/errors.js";

describe("takePage", () => {
  const items = Array.from({ length: 10 }, (_, i) => `item-${i}`);
  const take = (limit: number, maxBytes: number, skip: (s: string) => boolean = () => false) =>
    takePage(items, (s) => s, (s) => (skip(s) ? null : { s }), { limit, maxBytes });

  it("stops at the limit and names the last item taken", () => {
    expect(take(3, 1e9)).toEqual({ items: [{ s: "item-0" }, { s: "item-1" }, { s: "item-2" }], next_cursor: "item-2" });
    expect(take(10, 1e9).next_cursor).toBeNull();
  });

  it("stops before the byte budget, counting the commas, and always takes the first item", () => {
    const one = jsonBytes({ s: "item-0" }) + 1;
    expect(take(100, 3 * one).items).toHaveLength(3);
    expect(take(100, 3 * one - 1).items).toHaveLength(2);
    expect(take(100, 1).items).toHaveLength(1);
  });

  it("skips filtered items and ends with a null cursor when the rest are filtered out", () => {
    const page = take(2, 1e9, (s) => s !== "item-4" && s !== "item-9");
    expect(page).toEqual({ items: [{ s: "item-4" }, { s: "item-9" }], next_cursor: null });
  });

  it("gives a full page no cursor when every item after it is filtered out", () => {
    const skipOthers = (s: string) => s !== "item-2" && s !== "item-5";
    expect(take(1, 1e9, skipOthers)).toEqual({ items: [{ s: "item-2" }], next_cursor: "item-2" });
    expect(take(2, 1e9, skipOthers)).toEqual({ items: [{ s: "item-2" }, { s: "item-5" }], next_cursor: null });
  });

  it("never exceeds the budget once it holds an item (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 50 }), fc.integer({ min: 1, max: 400 }), (xs, maxBytes) => {
        const page = takePage(xs.map((x, i) => [String(i), x] as const), ([k]) => k, ([, x]) => ({ x }), { limit: 1000, maxBytes });
        const used = page.items.reduce((n, it) => n + jsonBytes(it) + 1, 0);
        if (page.items.length > 1) expect(used).toBeLessThanOrEqual(maxBytes);
        expect(page.items.length === 0).toBe(xs.length === 0);
      }),
    );
  });
});

describe("utf8Length", () => {
  it("counts UTF-8 bytes as Node does", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => utf8Length(s) === Buffer.byteLength(s, "utf8")));
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (s) => utf8Length(s) === Buffer.byteLength(s, "utf8")));
    expect(utf8Length("a\ud800b")).toBe(Buffer.byteLength("a\ud800b"));
  });
});

describe("cursors", () => {
  it("round-trip keys and refuse what was not issued", () => {
    for (const key of ["alpha", "text.summarize", "a_b-9", "7"]) expect(decodeCursor(encodeCursor(key), /^[a-z0-9._-]+$/)).toBe(key);
    expect(encodeCursor("summarizer")).toBe(Buffer.from("summarizer").toString("base64url"));
    expect(() => decodeCursor("%%%", /^[a-z]+$/)).toThrow(RegistryError);
    expect(() => decodeCursor(encodeCursor("Upper"), /^[a-z]+$/)).toThrow(/cursor is not one this registry issued/);
  });
});
