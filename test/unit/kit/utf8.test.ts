import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { utf8 } from "../../../src/kit/utf8.js";

describe("utf8 (NATS payloads from strings)", () => {
  it("gives the bytes TextEncoder gives, for any string, lone surrogates included", () => {
    const te = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => {
        expect([...utf8(s)]).toEqual([...te.encode(s)]);
      }),
    );
  });

  it("gives a view of exactly the text's bytes, though small ones share a pooled buffer", () => {
    const a = utf8("first");
    const b = utf8("second");
    expect([a.byteLength, b.byteLength]).toEqual([5, 6]);
    expect(new TextDecoder().decode(b)).toBe("second");
    expect(a instanceof Uint8Array).toBe(true);
  });
});
