/**
 * The graph's layout, by elkjs (the layered algorithm: dependencies flow left to right, edge
 * crossings kept few). Bundled on its own into layout.js (src/ui/build-page.mjs) and loaded by
 * the graph view only when a graph is drawn: elkjs is about 1.5 MB, the rest of the page 20 kB.
 * It runs in the page's thread (elk.bundled.js, no worker: the page's CSP allows no worker), so
 * a large graph holds the page while it is laid out (graph-view.ts uses it for graphs of up to 400 nodes, quick-layout.ts past that).
 */
import ELK, { type ElkNode } from "elkjs/lib/elk.bundled.js";

import type { Laid } from "./layout-types.js";

const elk = new ELK();

/**
 * Past this many nodes the layout trades some crossings for time: crossings are not minimised
 * (the nodes keep the registry's order within a layer) and nodes are placed by the simple
 * strategy. Measured in node on the shared 2-core machine, a 2,000-node graph took 12.7 s with
 * elkjs's defaults and 2.1 s so; small graphs keep the defaults' tidier picture.
 */
const QUICK_ABOVE = 150;
const QUICK = { "elk.layered.thoroughness": "1", "elk.layered.nodePlacement.strategy": "SIMPLE", "elk.layered.crossingMinimization.strategy": "INTERACTIVE" };

export async function layoutGraph(nodes: Array<{ id: string; width: number; height: number }>, edges: Array<{ id: string; from: string; to: string }>): Promise<Laid> {
  const graph: ElkNode = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.spacing.nodeNode": "18",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56",
      "elk.edgeRouting": "POLYLINE",
      "elk.padding": "[top=8,left=8,bottom=8,right=8]",
      ...(nodes.length > QUICK_ABOVE ? QUICK : {}),
    },
    children: nodes.map((n) => ({ ...n })),
    edges: edges.map((e) => ({ id: e.id, sources: [e.from], targets: [e.to] })),
  };
  const out = await elk.layout(graph);
  return {
    width: out.width ?? 0,
    height: out.height ?? 0,
    nodes: (out.children ?? []).map((c) => ({ id: c.id, x: c.x ?? 0, y: c.y ?? 0, width: c.width ?? 0, height: c.height ?? 0 })),
    edges: (out.edges ?? []).map((e) => {
      const s = "sections" in e && Array.isArray(e.sections) ? e.sections[0] : undefined;
      return { id: e.id, points: s ? [s.startPoint, ...(s.bendPoints ?? []), s.endPoint] : [] };
    }),
  };
}
