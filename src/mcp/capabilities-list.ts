/**
 * `capabilities_list` (PROTOCOL.md section 13): the capability projection a coordinator plans
 * with, one page at a time. Without filters it is the registry's `capabilities` query, its
 * cursor passed through. With `query` or `kind` (which that query does not take), the names
 * come from `search` (relevance order) or from `discover` (the agents of that kind), and each
 * name of the page is answered by `lookup` (which filters by kind), so every filter is the
 * registry's own; the cursor is then this tool's: the position in those names.
 */
import { z } from "zod";
import type { RegistryClient } from "../client/registry-client.js";
import { ErrorCode } from "../protocol/errors.js";
import { AGENT_KINDS, type AgentKind } from "../protocol/spec.js";
import type { CapabilityEntry } from "../protocol/messages.js";
import { DEFAULT_PAGE, READ_ONLY } from "./query-tools.js";
import { defineTool } from "./tool-definition.js";
import { ToolError } from "./tool-error.js";
import { capabilitiesListOutput } from "./tool-schemas.js";

/** Most search results a query looks at: the registry's own bound on `search`. */
const SEARCH_LIMIT = 100;

type ListedCapability = Pick<CapabilityEntry, "name" | "description" | "providers" | "input_schema">;
type Page = { capabilities: ListedCapability[]; next_cursor: string | null };
type Filters = { query?: string | undefined; kind?: AgentKind | undefined };

type Position = { q: string | null; k: string | null; o: number };

const encode = (p: Position): string => Buffer.from(JSON.stringify(p)).toString("base64url");

function decode(cursor: string, filters: Filters): number {
  let p: Partial<Position> | undefined;
  try {
    p = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<Position>;
  } catch {
    p = undefined;
  }
  if (!p || !Number.isSafeInteger(p.o) || (p.o ?? -1) < 0 || p.q !== (filters.query ?? null) || p.k !== (filters.kind ?? null)) {
    throw new ToolError(ErrorCode.InvalidRequest, "cursor does not belong to this query and kind: pass the next_cursor of the previous page with the same query and kind", [
      { path: "cursor", message: "not a cursor of this listing" },
    ]);
  }
  return p.o!;
}

/** The candidate names, in the order they are listed. */
async function names(client: RegistryClient, filters: Filters): Promise<string[]> {
  if (filters.query !== undefined) {
    const found = await client.search({ query: filters.query, limit: SEARCH_LIMIT, ...(filters.kind ? { kind: filters.kind } : {}) });
    return [...new Set(found.results.map((r) => r.capability))];
  }
  const agents = await client.discoverAll({ kind: filters.kind! });
  return [...new Set(agents.agents.flatMap((a) => a.capabilities))].sort();
}

async function filteredPage(client: RegistryClient, filters: Filters, limit: number, cursor: string | undefined): Promise<Page> {
  const all = await names(client, filters);
  const from = cursor === undefined ? 0 : decode(cursor, filters);
  const slice = all.slice(from, from + limit);
  const entries = await Promise.all(
    slice.map(async (name): Promise<ListedCapability | null> => {
      const found = await client.lookupAll({ capability: name, ...(filters.kind ? { kind: filters.kind } : {}) });
      const best = found.providers[0];
      if (!best) return null; // no ready provider (of that kind): the projection leaves it out too
      return { name, description: best.description, providers: found.providers.map((p) => p.agent_type), input_schema: best.input_schema };
    }),
  );
  const next = from + limit < all.length ? encode({ q: filters.query ?? null, k: filters.kind ?? null, o: from + limit }) : null;
  return { capabilities: entries.filter((e): e is ListedCapability => e !== null), next_cursor: next };
}

export async function capabilitiesPage(client: RegistryClient, filters: Filters, limit: number, cursor?: string): Promise<Page> {
  if (filters.query !== undefined || filters.kind !== undefined) return filteredPage(client, filters, limit, cursor);
  const page = await client.capabilities({ limit, ...(cursor !== undefined ? { cursor } : {}) });
  return {
    capabilities: page.capabilities.map((c) => ({ name: c.name, description: c.description, providers: c.providers, input_schema: c.input_schema ?? {} })),
    next_cursor: page.next_cursor,
  };
}

export const capabilitiesListTool = defineTool({
  name: "capabilities_list",
  title: "List capabilities",
  description:
    "The capabilities the fleet offers right now (those with at least one ready provider): each with its description, the agent types " +
    "that provide it (best first) and the input_schema a task payload must satisfy. This is what to plan with. " +
    "`query` keeps the ones matching some keywords, most relevant first (at most the 100 best matches); `kind` keeps those of agents, MCP servers or tools. " +
    "Paged, in name order without a query: pass next_cursor back as cursor, with the same query and kind.",
  input: z.strictObject({
    query: z.string().min(1).max(1024).describe("keywords to match against names, descriptions, tags and examples").optional(),
    kind: z.enum(AGENT_KINDS).describe("only capabilities of entries of this kind").optional(),
    cursor: z.string().min(1).max(1024).describe("the next_cursor of the previous page").optional(),
    limit: z.number().int().min(1).max(100).describe(`capabilities per page, 1..100 (default ${DEFAULT_PAGE})`).optional(),
  }),
  output: capabilitiesListOutput,
  annotations: READ_ONLY,
  run: async (args, { link }) => capabilitiesPage(await link.client(), { query: args.query, kind: args.kind }, args.limit ?? DEFAULT_PAGE, args.cursor),
});
