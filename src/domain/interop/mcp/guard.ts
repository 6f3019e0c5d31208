/**
 * The bounds a tool spec must keep before any of it is mapped, for the same reasons as the
 * request body's (kit/request-body.ts): no `__proto__` or `constructor` key at any
 * depth, so no later spread or merge of a kept value (`_meta`, a schema) can be poisoned, and
 * no nesting deeper than a body may have, because `mcp_extra` is stored and re-read with
 * recursive JSON code that no schema limit covers. Callers other than the NATS endpoint (the
 * CLI reading a file, the SDK) get the same refusal, as `invalid_card` with the path.
 */
import type { ErrorIssue } from "../../errors.js";

/** The body's own limit (PROTOCOL.md section 3): the tool spec sits inside a body, so it can never be deeper. */
export const MAX_TOOLSPEC_DEPTH = 64;

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor"]);

/** The first problem found, with its path under `root` (e.g. `mcp_toolspec.tools.2._meta.__proto__`), or null. */
export function toolspecHazard(value: unknown, root: string): ErrorIssue | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 1 }];
  while (stack.length > 0) {
    const { value: node, path, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > MAX_TOOLSPEC_DEPTH) return { path, message: `nests more than ${MAX_TOOLSPEC_DEPTH} levels deep; the limit is ${MAX_TOOLSPEC_DEPTH}` };
    const entries: Array<[string, unknown]> = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node);
    for (const [key, child] of entries) {
      const childPath = `${path}.${key}`;
      if (!Array.isArray(node) && FORBIDDEN_KEYS.has(key)) return { path: childPath, message: `key "${key}" is not allowed` };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return null;
}
