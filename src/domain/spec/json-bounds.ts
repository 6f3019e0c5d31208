/**
 * The size and nesting of a JSON value kept as it came (an MCP tool's `_meta`, `icons`,
 * `execution`, the other kept tool keys), measured by one iterative walk that stops at the first
 * bound crossed: such values are stored and re-read with recursive JSON code that no schema
 * limit covers, and they may come from files as well as from bounded request bodies.
 */

/** Deepest nesting accepted: a request body's own limit (kit/request-body.ts). */
export const MAX_KEPT_JSON_DEPTH = 64;

/**
 * Why `value` is over `maxChars` characters as JSON text (about its length; keys and
 * separators counted) or nests deeper than `maxDepth`, or null when it is within both.
 */
export function jsonBoundProblem(value: unknown, maxChars: number, maxDepth = MAX_KEPT_JSON_DEPTH): string | null {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  let chars = 0;
  while (stack.length > 0) {
    const node = stack.pop()!;
    chars += scalarSize(node.value);
    if (chars > maxChars) return `larger than ${maxChars} characters as JSON; the limit is ${maxChars}`;
    if (typeof node.value !== "object" || node.value === null) continue;
    if (node.depth > maxDepth) return `nests more than ${maxDepth} levels deep; the limit is ${maxDepth}`;
    if (Array.isArray(node.value)) {
      for (const item of node.value) stack.push({ value: item, depth: node.depth + 1 });
      continue;
    }
    for (const [key, item] of Object.entries(node.value)) {
      chars += key.length + 4;
      stack.push({ value: item, depth: node.depth + 1 });
    }
  }
  return null;
}

/** A scalar's JSON length, or an object's or array's brackets (members are counted as they are visited). */
function scalarSize(value: unknown): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number" || typeof value === "boolean") return String(value).length + 1;
  return value === null || value === undefined ? 5 : 2;
}
