/**
 * An AgentSpec's `representative_queries` (v1.2) taken from examples written for its
 * capabilities (an A2A card's skill examples): ARD asks for 2 to 5 sentences a caller would
 * say, and examples are mostly that. Examples that are payloads (JSON text, starting with `{` or
 * `[`) are not queries and are passed over. Only those the field accepts are taken, so filling
 * it never makes a card that registered before refused now.
 */
import { MAX_REPRESENTATIVE_QUERY_LENGTH } from "../../protocol/spec.js";

const MIN = 2;
const MAX = 5;

/** `{ representative_queries }` when the examples give at least 2 usable ones, else `{}` (to spread into a spec). */
export function queriesFromExamples(examples: readonly unknown[]): { representative_queries?: string[] } {
  const queries = new Set<string>();
  for (const example of examples) {
    if (queries.size >= MAX) break;
    if (typeof example !== "string" || example.length > MAX_REPRESENTATIVE_QUERY_LENGTH) continue;
    const text = example.trim();
    if (text !== "" && !text.startsWith("{") && !text.startsWith("[")) queries.add(example);
  }
  return queries.size >= MIN ? { representative_queries: [...queries] } : {};
}
