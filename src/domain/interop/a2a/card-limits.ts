/**
 * Bounds on an Agent Card, checked by one iterative walk before anything recursive (ajv,
 * JSON.stringify, structuredClone) touches it. The service's request reader already refuses
 * deep, large or `__proto__`-keyed bodies (kit/request-body.ts), but cards also come
 * from registry files, the CLI and stored specs, so the domain does not rely on that.
 */
/** Deepest nesting of objects and arrays in a card (the card itself is level 1). */
export const MAX_CARD_DEPTH = 64;
/** Largest card, counted as (about) the length of its JSON text. Four times the default request body limit, so the body limit answers first. */
export const MAX_CARD_BYTES = 1024 * 1024;
/** Keys refused at any depth, as in request bodies: no later spread or merge can be poisoned. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor"]);

/** The first bound a card crosses, at its path inside the card ("" for the card itself). */
export type LimitProblem = { path: string; message: string };

/**
 * The first bound the card crosses, or null. The size is the length of the card's JSON text,
 * summed while walking, so the path names the value where the limit was crossed.
 */
export function checkCardLimits(card: unknown): LimitProblem | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: card, path: "", depth: 1 }];
  const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
  let bytes = 0;
  const tooLarge = (path: string): LimitProblem => ({ path, message: `the card is larger than ${MAX_CARD_BYTES} bytes as JSON; the limit is ${MAX_CARD_BYTES}` });
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    bytes += jsonSize(value);
    if (bytes > MAX_CARD_BYTES) return tooLarge(path);
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_CARD_DEPTH) return { path, message: `nests more than ${MAX_CARD_DEPTH} levels deep; the limit is ${MAX_CARD_DEPTH}` };
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push({ value: item, path: at(path, String(i)), depth: depth + 1 }));
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return { path, message: "not a JSON value" };
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const itemPath = at(path, key);
      if (FORBIDDEN_KEYS.has(key)) return { path: itemPath, message: `the key "${key}" is not allowed` };
      bytes += key.length + 3;
      stack.push({ value: item, path: itemPath, depth: depth + 1 });
    }
  }
  return null;
}

/** The JSON length of a scalar, or of an object's or array's brackets (their members are counted as they are visited). */
function jsonSize(value: unknown): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number" || typeof value === "boolean") return String(value).length + 1;
  return value === null || value === undefined ? 5 : 2;
}
