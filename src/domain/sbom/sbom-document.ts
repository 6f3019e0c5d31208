/**
 * An SBOM document of the fleet, or of one agent's dependency closure (PROTOCOL.md section
 * 11.2, `sbom`): the dependency graph, what it lists, written in the asked format. One path
 * for the `sbom` op and for `agent-registry sbom export --file`, which reads a registry file
 * offline into a view of its own.
 */
import { dependencyGraph, type GraphFleet } from "../graph/graph-query.js";
import { agentNodeId } from "../graph/resolution.js";
import type { AgentState } from "../model/model.js";
import { cycloneDx, type BomContext } from "./cyclonedx.js";
import { fleetBom } from "./fleet-bom.js";
import { spdx } from "./spdx.js";

export type { BomContext };
export type SbomFormat = "cyclonedx" | "spdx";

/**
 * An agent's document lists everything it depends on, however deep (PROTOCOL.md section 11.2),
 * not the `graph` op's default 16 levels: a document cannot say it was cut, so only its size
 * bounds it (the walk visits each agent type once and stops when the graph outgrows the reply).
 */
const WHOLE_CLOSURE = { depth: Number.POSITIVE_INFINITY } as const;

/**
 * The document, or null when the graph it is written from did not fit `maxGraphBytes` (the
 * graph is smaller than any document written from it, so a caller bounded by a reply's size
 * learns early that the document cannot fit either).
 */
export function sbomDocument(fleet: GraphFleet, format: SbomFormat, root: AgentState | undefined, tenant: string | null, ctx: BomContext, maxGraphBytes: number): Record<string, unknown> | null {
  const graph = dependencyGraph(fleet, WHOLE_CLOSURE, root, tenant, maxGraphBytes);
  if (graph.problems.some((p) => p.code === "truncated")) return null;
  const bom = fleetBom(fleet, graph, root ? agentNodeId(root) : null, tenant);
  return format === "spdx" ? spdx(bom, ctx) : cycloneDx(bom, ctx);
}
