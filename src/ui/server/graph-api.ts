/**
 * /ui/api/graph: the dependency graph the page draws (PROTOCOL.md section 11.2, the `graph` op).
 * Around an agent type (`?agent=`): what it depends on and what depends on it, `depth` steps each
 * way (2 by default), merged into one graph; without one, the whole fleet's; `?tenant=` asks that
 * tenant's view (shared agents and the tenant's). The registry cuts a graph too large for one
 * reply and says so in `problems` (`truncated`).
 */
import type { RegistryClient } from "../../client/registry-client.js";
import type { GraphEdge, GraphNode, GraphReply } from "../../client/types.js";
import { AGENT_TYPE_RE, TENANT_RE } from "../../protocol/ids.js";
import type { PageGraph } from "../shared.js";

export class GraphRequestError extends Error {}

const DEFAULT_DEPTH = 2;

export async function pageGraph(clientFor: (tenant: string | undefined) => RegistryClient, q: URLSearchParams, minRevision: number | undefined): Promise<PageGraph> {
  const agent = q.get("agent") || undefined;
  const tenant = q.get("tenant") || undefined;
  if (agent !== undefined && !AGENT_TYPE_RE.test(agent)) throw new GraphRequestError("agent: not an agent type");
  if (tenant !== undefined && !TENANT_RE.test(tenant)) throw new GraphRequestError("tenant: not a tenant name");
  const depthText = q.get("depth");
  const depth = depthText === null || depthText === "" ? DEFAULT_DEPTH : Number(depthText);
  if (!Number.isSafeInteger(depth) || depth < 1 || depth > 16) throw new GraphRequestError("depth: an integer from 1 to 16");
  const client = clientFor(tenant);
  const opts = minRevision === undefined ? {} : { minRevision };
  if (agent === undefined) {
    const g = await client.graph({}, opts);
    return { root: null, tenant: tenant ?? null, nodes: g.nodes, edges: g.edges, problems: g.problems, revision: g.revision };
  }
  const [down, up] = await Promise.all([
    client.graph({ agent_type: agent, direction: "dependencies", depth }, opts),
    client.graph({ agent_type: agent, direction: "dependents", depth }, opts),
  ]);
  return { root: agent, tenant: tenant ?? null, ...merged(down, up), revision: Math.max(down.revision, up.revision) };
}

/** The two directions as one graph: each node and each edge once. */
function merged(a: GraphReply, b: GraphReply): Pick<PageGraph, "nodes" | "edges" | "problems"> {
  const nodes = new Map<string, GraphNode>();
  for (const n of [...a.nodes, ...b.nodes]) if (!nodes.has(n.id)) nodes.set(n.id, n);
  const edges = new Map<string, GraphEdge>();
  for (const e of [...a.edges, ...b.edges]) edges.set(`${e.from}\u0000${e.to}\u0000${e.capability ?? ""}`, e);
  const problems = new Map<string, GraphReply["problems"][number]>();
  for (const p of [...a.problems, ...b.problems]) problems.set(`${p.code}\u0000${p.path}\u0000${p.message}`, p);
  return { nodes: [...nodes.values()], edges: [...edges.values()], problems: [...problems.values()] };
}
