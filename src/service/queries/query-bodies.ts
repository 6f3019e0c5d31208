/**
 * The body rules of every query op in one table, so a query can be refused before it waits
 * for `min_revision`: a bad body carrying a far-ahead revision used to wait the full 2 s and
 * get 503 `stale_view` instead of 400 `invalid_request` (issue 14). The handlers parse with
 * the same schemas, so the two cannot disagree.
 */
import semver from "semver";
import type { z } from "zod";
import { invalidRequest } from "../../domain/errors.js";
import type { QueryOp } from "../../protocol/subjects.js";
import {
  capabilitiesQuery,
  cardQuery,
  checkQuery,
  graphQuery,
  sbomQuery,
  toolspecQuery,
  discoverQuery,
  findQuery,
  getQuery,
  listQuery,
  lookupQuery,
  parseMessage,
  routeQuery,
  schemaQuery,
  schemasQuery,
  searchQuery,
  type LookupQuery,
} from "../../domain/messages.js";

export const QUERY_BODIES: { readonly [K in QueryOp]: z.ZodType } = {
  lookup: lookupQuery,
  get: getQuery,
  list: listQuery,
  capabilities: capabilitiesQuery,
  route: routeQuery,
  find: findQuery,
  search: searchQuery,
  discover: discoverQuery,
  card: cardQuery,
  toolspec: toolspecQuery,
  check: checkQuery,
  graph: graphQuery,
  sbom: sbomQuery,
  schemas: schemasQuery,
  schema: schemaQuery,
};

/** The lookup's `version` must be a semver range (a rule zod does not state). */
export function checkVersionRange(q: Pick<LookupQuery, "version">): void {
  if (q.version !== undefined && semver.validRange(q.version) === null) {
    throw invalidRequest(`version ${JSON.stringify(q.version)} is not a semver range`, [{ path: "version", message: "not a semver range" }]);
  }
}

/** Throws `invalid_request` for a body the op's handler would refuse. */
export function checkQueryBody(op: QueryOp, body: unknown): void {
  const q: unknown = parseMessage(QUERY_BODIES[op], body, op);
  if (op === "lookup") checkVersionRange(q as LookupQuery);
}
