import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { jsonShape, parseRequestBody, type BodyLimits } from "../../../src/kit/request-body.js";
import { thrownRegistryError } from "../registry-error.js";

const limits: BodyLimits = { maxBytes: 256 * 1024, maxDepth: 64 };
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const parse = (s: string | Uint8Array, l: BodyLimits = limits) => parseRequestBody(typeof s === "string" ? bytes(s) : s, l);

const refusal = thrownRegistryError;

describe("parseRequestBody: size", () => {
  it("refuses a body over the limit with payload_too_large (413)", () => {
    const e = refusal(() => parse('{"a":"0123456789"}', { maxBytes: 10, maxDepth: 64 }));
    expect(e).toMatchObject({ code: "payload_too_large", status: 413 });
    expect(e.message).toContain("10");
  });

  it("checks the size before anything else looks at the bytes", () => {
    const notUtf8 = new Uint8Array(2000).fill(0xff);
    expect(refusal(() => parse(notUtf8, { maxBytes: 1000, maxDepth: 64 })).code).toBe("payload_too_large");
    expect(refusal(() => parse("[".repeat(2000), { maxBytes: 1000, maxDepth: 64 })).code).toBe("payload_too_large");
  });

  it("accepts a body of exactly the limit", () => {
    const body = '{"a":1}';
    expect(parse(body, { maxBytes: body.length, maxDepth: 64 })).toEqual({ a: 1 });
  });
});

describe("parseRequestBody: depth", () => {
  it("accepts the maximum depth and refuses one more level", () => {
    const l = { maxBytes: 1024, maxDepth: 3 };
    expect(parse('{"a":{"b":[1]}}', l)).toEqual({ a: { b: [1] } });
    const e = refusal(() => parse('{"a":{"b":[[1]]}}', l));
    expect(e.code).toBe("invalid_request");
    expect(e.message).toContain("4 levels");
  });

  it("refuses a 100,000-deep body without a RangeError", () => {
    const deep = `{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    const e = refusal(() => parse(deep, { maxBytes: 1024 * 1024, maxDepth: 64 }));
    expect(e.code).toBe("invalid_request");
    expect(e.message).toMatch(/100001 levels/);
    // Unbalanced: not JSON, refused by the parse before any walk.
    const unbalanced = refusal(() => parse("{".repeat(100_000), { maxBytes: 1024 * 1024, maxDepth: 64 }));
    expect(unbalanced.code).toBe("invalid_request");
    expect(unbalanced.message).toMatch(/not JSON/);
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const l = { maxBytes: 1024, maxDepth: 2 };
    expect(parse('{"a":"[[[[{{{{"}', l)).toEqual({ a: "[[[[{{{{" });
    expect(parse('{"a":"\\"[[[[","b":["]]]\\\\"]}', l)).toEqual({ a: '"[[[[', b: ["]]]\\"] });
    expect(jsonShape(JSON.parse('{"k[":"{","v":[{"x":"]"}]}')).depth).toBe(3);
    expect(jsonShape(JSON.parse('"[[[["')).depth).toBe(0);
  });
});

describe("parseRequestBody: encoding and shape", () => {
  it("refuses invalid UTF-8", () => {
    const e = refusal(() => parse(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])));
    expect(e.code).toBe("invalid_request");
    expect(e.message).toMatch(/UTF-8/);
  });

  it("refuses what is not JSON", () => {
    for (const s of ["{nope", '{"a":1,}', "{'a':1}", '{"a":1} x']) {
      const e = refusal(() => parse(s));
      expect(e.code).toBe("invalid_request");
      expect(e.message).toMatch(/not JSON/);
    }
  });

  it("refuses JSON that is not an object", () => {
    for (const s of ["[]", "[1,2]", "1", '"text"', "null", "true"]) {
      const e = refusal(() => parse(s));
      expect(e.code).toBe("invalid_request");
      expect(e.message).toMatch(/must be a JSON object/);
    }
  });

  it("reads an empty or blank body as {}", () => {
    expect(parse(new Uint8Array())).toEqual({});
    expect(parse("  \n\t ")).toEqual({});
  });
});

describe("parseRequestBody: forbidden keys", () => {
  const cases: Array<[string, string]> = [
    ['{"__proto__":{"polluted":true}}', "__proto__"],
    ['{"constructor":{"prototype":{}}}', "constructor"],
    ['{"spec":{"capabilities":[{"name":"x"},{"__proto__":{}}]}}', "spec.capabilities.1.__proto__"],
    ['{"a":{"b":{"c":{"constructor":1}}}}', "a.b.c.constructor"],
    ['{"list":[[{"ok":1,"__proto__":null}]]}', "list.0.0.__proto__"],
  ];
  it.each(cases)("refuses %s with the path of the key", (body, path) => {
    const e = refusal(() => parse(body));
    expect(e.code).toBe("invalid_request");
    expect(e.issues).toEqual([{ path, message: "forbidden key" }]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  it("finds one escaped in the text (JSON.parse decodes the key)", () => {
    const e = refusal(() => parse('{"a":[{"\\u005f_proto__":{}}]}'));
    expect(e.issues).toEqual([{ path: "a.0.__proto__", message: "forbidden key" }]);
  });

  it("allows those words as values and inside longer keys", () => {
    expect(parse('{"name":"__proto__","constructor_id":"constructor"}')).toEqual({ name: "__proto__", constructor_id: "constructor" });
  });
});

describe("parseRequestBody: round trip", () => {
  const forbidden = (v: unknown): boolean => {
    if (typeof v !== "object" || v === null) return false;
    if (Array.isArray(v)) return v.some(forbidden);
    return Object.entries(v).some(([k, x]) => k === "__proto__" || k === "constructor" || forbidden(x));
  };

  it("parses any JSON object within the limits to an equal value", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 6 })), (obj) => {
        fc.pre(!forbidden(obj));
        const text = JSON.stringify(obj);
        expect(parse(text, { maxBytes: 1024 * 1024, maxDepth: 64 })).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("agrees with a structural depth count on generated values", () => {
    const depthOf = (v: unknown): number =>
      typeof v === "object" && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        expect(jsonShape(JSON.parse(JSON.stringify(v))).depth).toBe(depthOf(v));
      }),
      { numRuns: 300 },
    );
  });
});
