/**
 * Turns request bytes into a plain JSON object, refusing hostile input before anything
 * recursive touches it: the size is checked before decoding, the nesting depth is counted
 * on the raw text (V8's JSON.parse is iterative, so a 300,000-deep body parses fine and then
 * overflows every recursive consumer), bytes must be valid UTF-8, and `__proto__` /
 * `constructor` keys are refused at any depth so no later spread or merge can be poisoned.
 */
import { ErrorCode, RegistryError, invalidRequest } from "../../domain/errors.js";

export type BodyLimits = { readonly maxBytes: number; readonly maxDepth: number };

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

export function parseRequestBody(bytes: Uint8Array, limits: BodyLimits): Record<string, unknown> {
  if (bytes.length > limits.maxBytes) {
    throw new RegistryError(
      ErrorCode.PayloadTooLarge,
      `body is ${bytes.length} bytes; the limit is ${limits.maxBytes}`,
    );
  }
  if (bytes.length === 0) return {};
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidRequest("body is not valid UTF-8");
  }
  if (text.trim() === "") return {};
  const depth = maxNesting(text);
  if (depth > limits.maxDepth) throw invalidRequest(`body nests ${depth} levels deep; the limit is ${limits.maxDepth}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw invalidRequest(`body is not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidRequest("body must be a JSON object");
  }
  const forbidden = findForbiddenKey(value);
  if (forbidden !== null) throw invalidRequest(`key "${forbidden.key}" is not allowed`, [{ path: forbidden.path, message: "forbidden key" }]);
  return value as Record<string, unknown>;
}

/** Deepest bracket nesting outside string literals; linear, no recursion. */
export function maxNesting(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > max) max = depth;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return max;
}

/** Iterative walk (the depth is already bounded, but a stack keeps it cheap and safe). */
function findForbiddenKey(root: object): { key: string; path: string } | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: "" }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: path ? `${path}.${i}` : String(i) }));
      continue;
    }
    for (const key of Object.keys(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (FORBIDDEN_KEYS.has(key)) return { key, path: childPath };
      stack.push({ value: (value as Record<string, unknown>)[key], path: childPath });
    }
  }
  return null;
}
