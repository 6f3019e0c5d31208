/**
 * Small combinators that check the shape of parsed JSON and say what is wrong, for the records
 * the view reads from the store. zod would say the same but builds a copy of every object it
 * checks: 20 µs per spec, 0.2 s more of a cold start at 10,000 agent types, where these checks
 * read the parsed value in place (docs/performance.md). A check returns undefined when the value
 * fits, else the first problem with its path (`capabilities.2.tags: not an array`).
 */

export type Check = (v: unknown) => string | undefined;

/** One check per field of T, none missing: a field added to the type must be added here too. */
export type ShapeOf<T> = { readonly [K in keyof T]-?: Check };

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const string: Check = (v) => (typeof v === "string" ? undefined : "not a string");
export const boolean: Check = (v) => (typeof v === "boolean" ? undefined : "not a boolean");
/** JSON.parse turns 1e999 into Infinity, so a number from the store is checked to be finite. */
export const number: Check = (v) => (typeof v === "number" && Number.isFinite(v) ? undefined : "not a finite number");
/** Any JSON object, unchecked inside (capability schemas, an A2A card). */
export const anyObject: Check = (v) => (isObject(v) ? undefined : "not an object");

export const optional = (check: Check): Check => (v) => (v === undefined ? undefined : check(v));
export const nullable = (check: Check): Check => (v) => (v === null ? undefined : check(v));
export const either = (a: Check, b: Check): Check => (v) => (a(v) === undefined ? undefined : b(v));

export function oneOf(values: readonly string[]): Check {
  return (v) => (typeof v === "string" && values.includes(v) ? undefined : `not one of ${values.join(", ")}`);
}

export function arrayOf(item: Check): Check {
  return (v) => {
    if (!Array.isArray(v)) return "not an array";
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i]);
      if (problem !== undefined) return at(String(i), problem);
    }
    return undefined;
  };
}

/** An object whose every value passes `value` (tags, metadata). */
export function recordOf(value: Check): Check {
  return (v) => {
    if (!isObject(v)) return "not an object";
    for (const key in v) {
      if (!Object.hasOwn(v, key)) continue;
      const problem = value(v[key]);
      if (problem !== undefined) return at(key, problem);
    }
    return undefined;
  };
}

/**
 * An object with these fields; fields it does not name are left alone (a newer writer's
 * additions). No field name of a record is one of Object.prototype's, so a plain read is enough.
 */
export function objectOf(shape: Readonly<Record<string, Check>>): Check {
  const keys = Object.keys(shape);
  const checks = Object.values(shape);
  return (v) => {
    if (!isObject(v)) return "not an object";
    for (let i = 0; i < keys.length; i++) {
      const problem = checks[i]!(v[keys[i]!]);
      if (problem !== undefined) return at(keys[i]!, problem);
    }
    return undefined;
  };
}

const at = (key: string, problem: string): string => (problem.includes(": ") ? `${key}.${problem}` : `${key}: ${problem}`);
