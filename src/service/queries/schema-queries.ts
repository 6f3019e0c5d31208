/**
 * The query ops of the named schemas (PROTOCOL.md section 11.1): `schemas` lists them, paged
 * like `list` (by name, then version in semver order; bounded by the count asked for and by
 * the connection's max_payload), `schema` answers one with the agent types that use it.
 * Schemas belong to the whole registry, not to a tenant; `used_by` names only the agent types
 * the asker can see.
 */
import { notFound } from "../../domain/errors.js";
import { decodeCursor, encodeCursor, jsonBytes, takePage } from "../../domain/query/page.js";
import type { SchemaBook, StoredSchema } from "../../domain/schemas/schema-book.js";
import { refKey } from "../../domain/schemas/schema-refs.js";
import { visibleTo } from "../../domain/model/model.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { SchemaSummary } from "../../protocol/messages.js";
import { schemaQuery, schemasQuery, type SchemaQuery, type SchemasQuery } from "../../domain/messages.js";
import { defineQuery } from "./query-entry.js";

/** schemas and schema: their bodies and answers. */
export const schemaQueries = {
  // Section 11.1: the named schemas are the registry's, whatever the tenant; used_by is the asker's view.
  schemas: defineQuery({
    body: schemasQuery,
    answer(q, _tenant, at) {
      return listSchemas(at.view.namedSchemas, q, at.listBytes());
    },
  }),

  schema: defineQuery({
    body: schemaQuery,
    answer(q, tenant, at) {
      return getSchema(at.view.namedSchemas, at.view, q, tenant, at.listBytes());
    },
  }),
};

/** A cursor holds `name:version` of the last schema a page held. */
const SCHEMA_CURSOR_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}:[0-9A-Za-z.-]{5,256}$/;

export function listSchemas(book: SchemaBook, q: SchemasQuery, maxBytes: number): { schemas: SchemaSummary[]; next_cursor: string | null } {
  const all = book.sorted();
  const after = q.cursor ? decodeCursor(q.cursor, SCHEMA_CURSOR_RE) : undefined;
  const start = after === undefined ? 0 : positionAfter(all, after);
  const page = takePage(
    all.slice(start),
    (s) => refKey(s.name, s.version),
    (s) => (q.name === undefined || s.name === q.name ? { name: s.name, version: s.version, description: s.description } : null),
    { limit: q.limit ?? 100, maxBytes },
  );
  return { schemas: page.items, next_cursor: page.next_cursor === null ? null : encodeCursor(page.next_cursor) };
}

/**
 * One schema as stored (refs to other schemas kept, as `get` keeps a spec's) and who uses it.
 * `used_by` is cut to what fits the reply, sorted; `used_by_count` says how many there are.
 */
export function getSchema(book: SchemaBook, view: RegistryView, q: SchemaQuery, tenant: string | null, maxBytes: number) {
  const s = book.get(q.name, q.version);
  if (!s) throw notFound(`schema ${q.name} version ${q.version} is not stored`);
  const users = [...book.usedBy(q.name, q.version)].filter((t) => {
    const agent = view.get(t);
    return agent !== undefined && visibleTo(agent, tenant);
  });
  users.sort();
  let room = maxBytes - jsonBytes(s.schema) - jsonBytes(s.description);
  const usedBy: string[] = [];
  for (const t of users) {
    room -= t.length + 3;
    if (room < 0) break;
    usedBy.push(t);
  }
  return { name: s.name, version: s.version, schema: s.schema, description: s.description, used_by: usedBy, used_by_count: users.length };
}

/** Index of the first schema after the one a cursor named (it may have gone since). */
function positionAfter(sorted: readonly StoredSchema[], key: string): number {
  const i = sorted.findIndex((s) => refKey(s.name, s.version) === key);
  if (i >= 0) return i + 1;
  // Gone (removed by hand): the order is by name then version, so find where it would be.
  const [name, version] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
  const at = sorted.findIndex((s) => s.name > name || (s.name === name && s.version > version));
  return at < 0 ? sorted.length : at;
}
