/**
 * Every query op in one table, keyed by the protocol's QueryOp (a missing op does not compile):
 * each entry is the op's body schema and its answer (query-entry.ts), grouped by theme in the
 * files beside this one. The service parses a body once, with its entry's schema, before it
 * waits for `min_revision`: a bad body carrying a far-ahead revision used to wait the full 2 s
 * and get 503 `stale_view` instead of 400 `invalid_request` (issue 14).
 */
import type { z } from "zod";
import { parseMessage } from "../../domain/messages.js";
import type { QueryBody } from "../../protocol/messages.js";
import type { QueryOp } from "../../protocol/subjects.js";
import { agentQueries } from "./agent-queries.js";
import { documentQueries } from "./document-queries.js";
import { providerQueries } from "./provider-queries.js";
import type { QueryEntry } from "./query-entry.js";
import { schemaQueries } from "./schema-queries.js";

/** Each op's entry; every body may carry `min_revision`. */
export type QueryTable = { readonly [K in QueryOp]: QueryEntry<z.ZodType<QueryBody>> };

export const QUERIES = { ...providerQueries, ...agentQueries, ...documentQueries, ...schemaQueries } satisfies QueryTable;

/** The op's body as its schema parses it, with the op's own rules checked; `invalid_request` otherwise. */
export function parseQuery(op: QueryOp, body: unknown): QueryBody {
  const entry: QueryTable[QueryOp] = QUERIES[op];
  const q = parseMessage(entry.body, body, op);
  entry.check?.(q);
  return q;
}
