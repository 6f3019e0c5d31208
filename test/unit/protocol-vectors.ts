/**
 * The vectors of protocol/vectors/ (format: protocol/vectors/README.md), read for the unit and
 * integration tests that run them, and the subset match every client's runner implements.
 */
import { readFileSync } from "node:fs";

export type SpecLikeVector = {
  name: string;
  about: string;
  valid: boolean;
  /** Valid vectors: a partial AgentSpec the registry must store (subset match). */
  expect?: Record<string, unknown>;
  /** Valid vectors: the paths that the register reply's warnings name, in order. */
  warnings?: string[];
  /** Invalid vectors: the code and issue paths of the refusal. */
  code?: string;
  paths?: string[];
  /** Specs: whether agentspec.schema.json alone accepts it (invalid vectors only). */
  schema_valid?: boolean;
  /** Specs: the agent_type token of the register subject, when the spec's own is missing or not a token. */
  register_as?: string;
  /** Specs: the registry's answer on the wire when it differs from the validator's (`code`, `paths`). */
  wire?: { code: string; paths: string[] };
  /** Cards, tool specs and server.json documents: the register subject's agent_type, and the other fields of the register body. */
  agent_type?: string;
  with?: Record<string, unknown>;
};
export type SpecVector = SpecLikeVector & { spec: Record<string, unknown> };
export type CardVector = SpecLikeVector & { card: unknown };
export type ToolspecVector = SpecLikeVector & { toolspec: unknown };
/** v1.2: an MCP Registry server.json, its tools inside it or in `with` as `mcp_toolspec`. */
export type ServerVector = SpecLikeVector & { server: unknown };
export type RequestVector = {
  name: string;
  about: string;
  op: string;
  subject?: string;
  tenant?: string;
  body: unknown;
  /** Sent as this text instead of `body` (a body that is not JSON). */
  body_text?: string;
  expect: { reply: Record<string, unknown> } | { error: string; paths?: string[] };
};

function load<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(`../../protocol/vectors/${file}`, import.meta.url), "utf8")) as T;
}

export const specVectors = () => load<{ description: string; vectors: SpecVector[] }>("specs.json").vectors;
export const cardVectors = () => load<{ description: string; vectors: CardVector[] }>("cards.json").vectors;
export const toolspecVectors = () => load<{ description: string; vectors: ToolspecVector[] }>("toolspecs.json").vectors;
export const serverVectors = () => load<{ description: string; vectors: ServerVector[] }>("servers.json").vectors;
export const requestVectors = () => load<{
    description: string;
    schemas: Array<{ name: string; version: string; schema: unknown }>;
    fleet: Array<Record<string, unknown>>;
    vectors: RequestVector[];
  }>("requests.json");

/**
 * Where `actual` fails to match `expected`, as a path and a reason, or null when it matches:
 * every key of an expected object matches recursively (the actual object may hold more keys);
 * arrays have equal length and match element by element; anything else is equal as JSON.
 */
export function subsetMismatch(expected: unknown, actual: unknown, path = "$"): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}`;
    for (let i = 0; i < expected.length; i++) {
      const m = subsetMismatch(expected[i], actual[i], `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, k)) return `${path}.${k}: missing`;
      const m = subsetMismatch(v, (actual as Record<string, unknown>)[k], `${path}.${k}`);
      if (m) return m;
    }
    return null;
  }
  return expected === actual ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** The paths a warning names: the text before its first ": ". */
export const warningPaths = (warnings: readonly string[]): string[] => warnings.map((w) => w.split(": ")[0]!);
