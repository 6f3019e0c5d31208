/**
 * Refs to versioned schemas inside capability schemas (PROTOCOL.md section 11.1): an object
 * `{"$ref": "#<Name>:<Version>"}` anywhere a schema goes stands for that stored schema. This
 * module finds them and inlines them, recursively; it is pure (the schemas come in through a
 * lookup function), so the registrar, the queries and the tests share one definition.
 *
 * Only schema positions are walked (schema-keywords.ts): `const`, `enum`, `default` and
 * `examples` hold data, and a `$ref`-looking object there is data too. Inlining is bounded:
 * every object or array it builds counts against a node budget, so refs that fan out (a
 * diamond of schemas each using the next twice) cost at most the budget, never 2^n; a ref
 * met again while its own expansion is under way is a cycle and is refused, naming it.
 * A stored schema once inlined can be kept in a memo (resolved-ref-cache.ts) and reused
 * wherever it is met again, in this schema or the next: 256 capabilities that use one
 * 250-deep chain of refs expand the chain once, not 256 times (issue 35, item 6).
 */
import { SCHEMA_REF_RE, SCHEMA_VERSION_RE } from "../../protocol/ids.js";
import { ONE_SCHEMA, SCHEMA_ARRAY, SCHEMA_MAP } from "../spec/schema-keywords.js";

export type SchemaRef = { readonly name: string; readonly version: string };
/** A ref where it was found: `path` is inside the walked schema, dot-separated (`properties.q`). */
export type RefAt = SchemaRef & { readonly path: string };
export type RefProblem = { readonly path: string; readonly message: string };

export const refKey = (name: string, version: string): string => `${name}:${version}`;

/**
 * The named ref an object is: a `$ref` string of the form `#Name:Version`. `bad` for one of
 * that form whose version is not an exact semver version; undefined for anything else (a
 * local `#/...` ref or none at all, which ajv judges like any other keyword).
 */
export function namedRef(node: unknown): SchemaRef | { bad: string } | undefined {
  if (!isObject(node)) return undefined;
  const ref = node["$ref"];
  if (typeof ref !== "string") return undefined;
  const m = SCHEMA_REF_RE.exec(ref);
  if (!m) return undefined;
  const version = m[2]!;
  if (!SCHEMA_VERSION_RE.test(version)) return { bad: `$ref ${JSON.stringify(ref.slice(0, 300))}: ${JSON.stringify(version.slice(0, 260))} is not an exact semver version (X.Y.Z, optional -prerelease)` };
  return { name: m[1]!, version };
}

/** Every named ref of a schema with its path, in document order (iterative: agents' schemas are untrusted). */
export function findRefs(schema: unknown): { refs: RefAt[]; problems: RefProblem[] } {
  const refs: RefAt[] = [];
  const problems: RefProblem[] = [];
  const stack: Array<{ node: unknown; path: string }> = [{ node: schema, path: "" }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (!isObject(node)) continue;
    const ref = namedRef(node);
    if (ref && "bad" in ref) problems.push({ path, message: ref.bad });
    else if (ref) refs.push({ ...ref, path });
    const children: Array<{ node: unknown; path: string }> = [];
    for (const key of Object.keys(node)) forEachSubschema(key, node[key], path, (sub, at) => children.push({ node: sub, path: at }));
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return { refs, problems };
}

/** Looks a stored schema up; undefined when the store has no such `(name, version)`. */
export type SchemaSource = (name: string, version: string) => unknown;

/**
 * A stored schema as it is inlined below a root (without its `$schema`), with all its refs
 * resolved: the result, the objects and arrays inlining it counts, and the refs it went
 * through. Only an expansion with no missing ref is one, so it is the same wherever and in
 * whichever mode the schema is inlined (a cycle or a missing schema is never kept).
 */
export type InlinedSchema = {
  readonly schema: unknown;
  readonly nodes: number;
  readonly refs: number;
  /** The stored schema has a `$schema`, which a root that is only the ref keeps: that root is expanded anew. */
  readonly dialect: boolean;
};

/** Stored schemas already inlined, by refKey, for the sources they were resolved from. */
export interface RefMemo {
  get(key: string): InlinedSchema | undefined;
  set(key: string, inlined: InlinedSchema): void;
}

export type ResolveOptions = {
  /** Most objects and arrays the result may have (what a capability schema may have: schema-check.ts). */
  readonly maxNodes: number;
  /** `fail`: a missing schema is a problem; `keep`: the ref stays as it is and is reported in `missing`. */
  readonly missing: "fail" | "keep";
  /**
   * Expansions to reuse and to add to; it must have been filled from the same schemas as
   * `source` gives. A reused expansion counts its nodes as if inlined again, so the node
   * limit means what it means without one.
   */
  readonly memo?: RefMemo;
};

export type Resolved = { readonly schema: unknown; readonly missing: readonly RefAt[]; readonly refs: number } | { readonly problem: RefProblem };

/**
 * The schema with every named ref replaced by the stored schema it names, recursively. A ref
 * object with other keywords beside `$ref` keeps them, and the stored schema joins them under
 * `allOf` (a `$ref` beside other keywords means both apply). A stored schema inlined below
 * the root loses its `$schema`: the dialect is the enclosing schema's. The input is never
 * modified; parts without refs are shared with it, not copied.
 */
export function resolveRefs(schema: unknown, source: SchemaSource, opts: ResolveOptions): Resolved {
  const missing: RefAt[] = [];
  let nodes = 0;
  let refs = 0;
  // The refs being expanded, in order (for the cycle's message) and as a set (checked at every ref).
  const expanding: string[] = [];
  const expandingSet = new Set<string>();
  const memo = opts.memo;
  const count = (path: string, n = 1): void => {
    nodes += n;
    if (nodes > opts.maxNodes) throw new Problem(path, `inlining the $refs makes a schema of more than ${opts.maxNodes} objects and arrays; the limit is ${opts.maxNodes}`);
  };

  // Every object and array of the result is counted as it is visited (data included), so the
  // work and the result stay within the budget whatever the refs fan out to.
  const visit = (node: unknown, path: string, depth: number): unknown => {
    if (!isObject(node)) return node;
    count(path);
    const ref = namedRef(node);
    if (ref && "bad" in ref) throw new Problem(path, ref.bad);
    let base: Record<string, unknown> = node;
    let inlined: unknown;
    if (ref) {
      const key = refKey(ref.name, ref.version);
      if (expandingSet.has(key)) throw new Problem(path, `$ref #${key}: the schemas refer to each other in a cycle (${[...expanding, key].map((k) => `#${k}`).join(" -> ")})`);
      const alone = Object.keys(node).length === 1;
      // At the root, a schema that is only the ref keeps the stored schema's dialect: not the memo's form.
      const atRoot = depth === 0 && alone;
      const known = memo?.get(key);
      if (known && !(atRoot && known.dialect)) {
        count(path, known.nodes);
        refs += known.refs;
        inlined = known.schema;
      } else {
        const stored = source(ref.name, ref.version);
        if (stored === undefined) {
          if (opts.missing === "fail") throw new Problem(path, `$ref #${key}: no schema ${ref.name} version ${ref.version} is stored`);
          missing.push({ ...ref, path });
          return node;
        }
        const dialect = isObject(stored) && Object.hasOwn(stored, "$schema");
        const before = { nodes, refs, missing: missing.length };
        refs++;
        expanding.push(key);
        expandingSet.add(key);
        try {
          inlined = visit(atRoot ? stored : withoutDialect(stored), path, depth + 1);
        } finally {
          expanding.pop();
          expandingSet.delete(key);
        }
        if (memo && !(atRoot && dialect) && missing.length === before.missing) memo.set(key, { schema: inlined, nodes: nodes - before.nodes, refs: refs - before.refs, dialect });
      }
      if (alone) return inlined;
      const { $ref: _ref, ...siblings } = node;
      base = siblings;
    }
    let out: Record<string, unknown> | undefined;
    for (const key of Object.keys(base)) {
      const value = base[key];
      const next = mapSubschemas(key, value, path, (sub, at) => visit(sub, at, depth + 1), (n) => count(path, n));
      if (next !== value) (out ??= { ...base })[key] = next;
    }
    if (inlined !== undefined) {
      const allOf = Array.isArray(base["allOf"]) ? [...((out ?? base)["allOf"] as unknown[]), inlined] : [inlined];
      out = { ...(out ?? base), allOf };
    }
    return out ?? node;
  };

  try {
    const resolved = visit(schema, "", 0);
    return { schema: resolved, missing, refs };
  } catch (e) {
    if (e instanceof Problem) return { problem: { path: e.path, message: e.message } };
    throw e;
  }
}

class Problem extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** A stored schema's copy without `$schema`, for inlining below the root. */
function withoutDialect(schema: unknown): unknown {
  if (!isObject(schema) || !Object.hasOwn(schema, "$schema")) return schema;
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** Calls `f` with every subschema held by `key: value`, with its path. */
function forEachSubschema(key: string, value: unknown, path: string, f: (sub: unknown, path: string) => void): void {
  const at = (k: string) => (path ? `${path}.${k}` : k);
  if (ONE_SCHEMA.has(key) && (isObject(value) || typeof value === "boolean")) f(value, at(key));
  else if (SCHEMA_ARRAY.has(key) && Array.isArray(value)) value.forEach((v, i) => f(v, at(`${key}.${i}`)));
  else if (SCHEMA_MAP.has(key) && isObject(value)) for (const k of Object.keys(value)) f(value[k], at(`${key}.${k}`));
}

/**
 * `value` with `f` applied to every subschema it holds, or `value` itself when `f` changed
 * none of them; `counted` is told of the nodes met that `f` does not visit: the array or map
 * holding subschemas, and the objects and arrays of data (`enum`, `const`, annotations).
 */
function mapSubschemas(key: string, value: unknown, path: string, f: (sub: unknown, path: string) => unknown, counted: (n: number) => void): unknown {
  const at = (k: string) => (path ? `${path}.${k}` : k);
  if (ONE_SCHEMA.has(key) && (isObject(value) || typeof value === "boolean")) return f(value, at(key));
  if (SCHEMA_ARRAY.has(key) && Array.isArray(value)) {
    counted(1);
    const next = value.map((v, i) => f(v, at(`${key}.${i}`)));
    return next.every((v, i) => v === value[i]) ? value : next;
  }
  if (SCHEMA_MAP.has(key) && isObject(value)) {
    counted(1);
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      const next = f(value[k], at(`${key}.${k}`));
      if (next !== value[k]) (out ??= { ...value })[k] = next;
    }
    return out ?? value;
  }
  if (typeof value === "object" && value !== null) counted(nodesOf(value));
  return value;
}

/** Objects and arrays in a data value, remembered per object: stored schemas are inlined again and again. */
const nodeCounts = new WeakMap<object, number>();
function nodesOf(value: object): number {
  const known = nodeCounts.get(value);
  if (known !== undefined) return known;
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null) continue;
    n++;
    for (const child of Object.values(v)) if (typeof child === "object" && child !== null) stack.push(child);
  }
  nodeCounts.set(value, n);
  return n;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
