/**
 * The query table against the wire contract: every request type of src/protocol/ (what the SDK
 * sends) is a body its op's zod schema accepts, field for field. The type half is checked by
 * `npm run typecheck` (expectTypeOf does nothing at run time); the run-time half parses one
 * request of each type through the table, as the service does.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type {
  CapabilitiesRequest,
  CardRequest,
  CheckRequest,
  DiscoverRequest,
  FindRequest,
  GetRequest,
  GraphRequest,
  ListRequest,
  LookupRequest,
  QueryBody,
  RouteRequest,
  SbomRequest,
  SchemaRequest,
  SchemasRequest,
  SearchRequest,
  ToolspecRequest,
} from "../../../../src/protocol/messages.js";
import { QUERY_OPS, type QueryOp } from "../../../../src/protocol/subjects.js";
import { QUERIES, parseQuery } from "../../../../src/service/queries/query-table.js";

/** The protocol's request type of each op, with the `min_revision` every query may carry. */
type Requests = {
  lookup: LookupRequest;
  get: GetRequest;
  list: ListRequest;
  capabilities: CapabilitiesRequest;
  route: RouteRequest;
  find: FindRequest;
  search: SearchRequest;
  discover: DiscoverRequest;
  card: CardRequest;
  toolspec: ToolspecRequest;
  check: CheckRequest;
  graph: GraphRequest;
  sbom: SbomRequest;
  schemas: SchemasRequest;
  schema: SchemaRequest;
};

/** Every key of every member of a union (find's request is one of three shapes). */
type AllKeys<T> = T extends unknown ? keyof T : never;
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** True when every request of type `R` is a body `S` accepts and both name the same fields. */
type Agrees<R, S extends z.ZodType> = [R] extends [z.input<S>] ? Same<AllKeys<R>, keyof z.input<S>> : false;

/** One request of each op, typed by the protocol alone. */
const samples: { [K in QueryOp]: Requests[K] & QueryBody } = {
  lookup: { capability: "text.summarize", status: ["ready"], version: "^1.0.0", kind: "agent", read_only: true, verified_only: true, limit: 5, scope: "local", min_revision: 0 },
  get: { agent_type: "summarizer", instances_limit: 2 },
  list: { status: ["ready", "draining"], owner_team: "platform", tags: { tier: "gold" }, agent_types: ["summarizer"], limit: 10 },
  capabilities: { status: ["ready"], schemas: false, limit: 3 },
  route: { skill: "text.summarize", tags: ["fast"], preferred_runtime: "python", verified_only: false, scope: "global" },
  find: { tag: "fast", limit: 2, scope: "prefer_local" },
  search: { query: "summarize text", limit: 3, kind: "mcp_server", read_only: false },
  discover: { capability: "text.summarize", kind: "agent", limit: 4 },
  card: { agent_type: "summarizer", a2a_version: "0.3" },
  toolspec: { agent_type: "summarizer" },
  check: { capability: "text.summarize", direction: "output", payload: null },
  graph: { agent_type: "summarizer", direction: "dependents", depth: 2 },
  sbom: { format: "spdx", agent_type: "summarizer" },
  schemas: { name: "Document", limit: 10 },
  schema: { name: "Document", version: "1.0.0" },
};

describe("the query table", () => {
  it("has the protocol's request type of each op, field for field (checked by typecheck)", () => {
    expectTypeOf<{ [K in QueryOp]: Agrees<Requests[K] & QueryBody, (typeof QUERIES)[K]["body"]> }>().toEqualTypeOf<{ [K in QueryOp]: true }>();
    expect(Object.keys(QUERIES).sort()).toEqual([...QUERY_OPS].sort());
  });

  it.each(QUERY_OPS)("%s: parses a request of the protocol's type", (op) => {
    expect(parseQuery(op, samples[op])).toEqual(samples[op]);
  });

  it("refuses a lookup whose version is not a semver range, with the parse", () => {
    expect(() => parseQuery("lookup", { capability: "text.summarize", version: "not a range!" })).toThrow(
      expect.objectContaining({ code: "invalid_request", issues: [{ path: "version", message: "not a semver range" }] }),
    );
  });
});
