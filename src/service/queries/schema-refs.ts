/**
 * Resolving the named refs of schemas that arrive in a write (a spec's capability schemas, a
 * schema put): every ref must resolve, and what is compiled and checked is the resolved
 * schema. Refs are looked up in this replica's view, and one the view does not hold yet is
 * read from the store before it is called missing: a schema put through another replica a
 * moment ago may not have reached this view, and a register that follows a put must see it.
 *
 * A stored schema is expanded once per write and reused wherever it is met again, and
 * expansions from the view's schemas are kept for the next writes and queries
 * (resolved-ref-cache.ts). The work runs on the event loop in slices of a few milliseconds
 * (work-slices.ts), each charged to the caller: the registrar charges it to the agent type's
 * spec validation budget, which may stop the resolution between two schemas.
 */
import type { ErrorIssue } from "../../protocol/errors.js";
import type { StoreReader } from "../../domain/ports.js";
import { StoreUnavailableError } from "../../domain/ports.js";
import { ErrorCode, RegistryError } from "../../domain/errors.js";
import type { SchemaBook } from "../../domain/schemas/schema-book.js";
import { readSchemaRecord } from "../../domain/schemas/schema-record.js";
import { findRefs, refKey, resolveRefs, type RefAt, type SchemaSource } from "../../domain/schemas/schema-refs.js";
import { schemaKey } from "../../domain/model/records.js";
import { MAX_SCHEMA_NODES } from "../../domain/spec/schema-check.js";
import type { WriteMemo } from "../../domain/schemas/resolved-ref-cache.js";
import { WorkSlices } from "../work-slices.js";

/** Distinct schemas one write may refer to, directly or through others: each costs a node at least. */
export const MAX_REFERENCED_SCHEMAS = MAX_SCHEMA_NODES;
/**
 * Refs the view lacks that one write may look up in the store: a fresh put racing the write
 * is one or two; past this, refs the view lacks are missing, so a body full of made-up refs
 * costs a few reads, not hundreds.
 */
export const MAX_STORE_READS = 8;
/** What loadReferenced found: the source, and whether any of it came from the store rather than the view. */
type Referenced = { source: SchemaSource; readStore: boolean };

/**
 * Every schema the roots refer to, transitively, from the view or else the store; a source
 * over them. Refs that are nowhere stay missing, for resolveRefs to report with their path.
 */
export async function loadReferenced(roots: readonly unknown[], book: SchemaBook, store: StoreReader, slices?: WorkSlices): Promise<Referenced> {
  const found = new Map<string, unknown>();
  const absent = new Set<string>();
  let reads = 0;
  let pending: RefAt[] = [];
  for (const root of roots) {
    await slices?.next();
    pending.push(...findRefs(root).refs);
  }
  while (pending.length > 0) {
    const next: typeof pending = [];
    for (const ref of pending) {
      const key = refKey(ref.name, ref.version);
      if (found.has(key) || absent.has(key)) continue;
      await slices?.next();
      if (found.size >= MAX_REFERENCED_SCHEMAS) {
        throw new RegistryError(ErrorCode.InvalidRequest, `the schemas refer to more than ${MAX_REFERENCED_SCHEMAS} named schemas`, { issues: [{ path: ref.path, message: `more than ${MAX_REFERENCED_SCHEMAS} named schemas referred to` }] });
      }
      let schema = book.source(ref.name, ref.version);
      if (schema === undefined && reads < MAX_STORE_READS) {
        reads++;
        schema = slices ? await slices.off(() => readStored(store, ref.name, ref.version)) : await readStored(store, ref.name, ref.version);
      }
      if (schema === undefined) absent.add(key);
      else {
        found.set(key, schema);
        next.push(...findRefs(schema).refs);
      }
    }
    pending = next;
  }
  return { source: (name, version) => found.get(refKey(name, version)), readStore: reads > 0 };
}

/**
 * The schemas with their refs inlined, in order, or the issues of those that cannot be:
 * each at `paths[i]` joined with the ref's own path (a missing schema, a cycle, a schema
 * that grows past the node limit once inlined). The work is timed and charged by `slices`
 * (by default on performance.now, charged to no one), and stops with what their charge
 * throws (a spent budget).
 */
export async function resolveForWrite(
  schemas: readonly unknown[],
  paths: readonly string[],
  book: SchemaBook,
  store: StoreReader,
  slices = new WorkSlices({ now: () => performance.now() }),
): Promise<{ resolved: unknown[] } | { issues: ErrorIssue[] }> {
  const memo: WriteMemo = book.resolved.forWrite();
  const { source, readStore } = await loadReferenced(schemas, book, store, slices);
  const resolved: unknown[] = [];
  const issues: ErrorIssue[] = [];
  for (let i = 0; i < schemas.length; i++) {
    await slices.next();
    const r = resolveRefs(schemas[i], source, { maxNodes: MAX_SCHEMA_NODES, missing: "fail", memo });
    if ("problem" in r) issues.push({ path: [paths[i], r.problem.path].filter(Boolean).join("."), message: r.problem.message });
    else resolved.push(r.schema);
  }
  slices.finish();
  // Expansions read only from the view, in the generation the write started in, serve the next writes and queries.
  if (!readStore) memo.share();
  return issues.length > 0 ? { issues } : { resolved };
}

async function readStored(store: StoreReader, name: string, version: string): Promise<unknown> {
  let entry;
  try {
    entry = await store.get(schemaKey(name, version));
  } catch (e) {
    if (e instanceof StoreUnavailableError) throw new RegistryError(ErrorCode.Unavailable, "the store cannot be reached", { cause: e });
    throw e;
  }
  if (!entry || entry.operation !== "PUT") return undefined;
  const record = readSchemaRecord(entry.value, name, version);
  return typeof record === "string" ? undefined : record.schema;
}
