/**
 * A layered layout in linear time, for graphs too large for elkjs to lay out while a person
 * waits (layout.ts: a 2,000-node fleet took 1.4 s there, plus 5 s the first time to load and
 * compile its 1.5 MB script). Dependencies flow left to right as in elkjs's picture: a node's
 * layer is its longest path from a node nothing points to; within a layer, nodes are ordered
 * by the mean position of their predecessors (one barycentre sweep), so a tree's children sit
 * beside their parent; edges are straight. Crossings are not minimised further: at this size
 * the neighbourhood of an agent type is the view to read, and this one is for the whole shape.
 */
import type { Laid, LaidEdge, LaidNode } from "./layout-types.js";

const PADDING = 8;
const NODE_GAP = 18;
const LAYER_GAP = 56;

type Box = { id: string; width: number; height: number };
type Edge = { id: string; from: string; to: string };

/** Each node's layer: Kahn's order over the edges; nodes on a cycle go one layer past the rest. */
function layersOf(nodes: readonly Box[], edges: readonly Edge[]): Map<string, number> {
  const incoming = new Map<string, number>(nodes.map((n) => [n.id, 0]));
  const out = new Map<string, string[]>();
  for (const e of edges) {
    if (e.from === e.to) continue;
    incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
    const list = out.get(e.from);
    if (list) list.push(e.to);
    else out.set(e.from, [e.to]);
  }
  const layer = new Map<string, number>();
  const queue = nodes.filter((n) => incoming.get(n.id) === 0).map((n) => n.id);
  for (const id of queue) layer.set(id, 0);
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const to of out.get(id) ?? []) {
      layer.set(to, Math.max(layer.get(to) ?? 0, layer.get(id)! + 1));
      const left = incoming.get(to)! - 1;
      incoming.set(to, left);
      if (left === 0) queue.push(to);
    }
  }
  // A cycle's nodes never reach zero incoming edges (the registry refuses new cycles, but one
  // stored before it did is still drawn): they go after every layer the order placed.
  let last = 0;
  for (const l of layer.values()) last = Math.max(last, l + 1);
  for (const n of nodes) if (!layer.has(n.id)) layer.set(n.id, last);
  return layer;
}

export function quickLayout(nodes: readonly Box[], edges: readonly Edge[]): Laid {
  const layer = layersOf(nodes, edges);
  const columns: Box[][] = [];
  for (const n of nodes) (columns[layer.get(n.id)!] ??= []).push(n);
  const predecessors = new Map<string, string[]>();
  for (const e of edges) {
    const list = predecessors.get(e.to);
    if (list) list.push(e.from);
    else predecessors.set(e.to, [e.from]);
  }
  // Rows: a node's index in its layer, then each layer sorted by its predecessors' mean row.
  const row = new Map<string, number>();
  for (const column of columns) {
    if (!column) continue;
    const keyOf = new Map<string, number>();
    column.forEach((n, i) => {
      const placed = (predecessors.get(n.id) ?? []).map((p) => row.get(p)).filter((r): r is number => r !== undefined);
      keyOf.set(n.id, placed.length > 0 ? placed.reduce((a, b) => a + b, 0) / placed.length : i);
    });
    column.sort((a, b) => keyOf.get(a.id)! - keyOf.get(b.id)!);
    column.forEach((n, i) => row.set(n.id, i));
  }
  const laidNodes: LaidNode[] = [];
  const byId = new Map<string, LaidNode>();
  let x = PADDING;
  let height = 0;
  for (const column of columns) {
    if (!column) continue;
    let y = PADDING;
    let width = 0;
    for (const n of column) {
      const laid = { id: n.id, x, y, width: n.width, height: n.height };
      laidNodes.push(laid);
      byId.set(n.id, laid);
      y += n.height + NODE_GAP;
      width = Math.max(width, n.width);
    }
    height = Math.max(height, y - NODE_GAP + PADDING);
    x += width + LAYER_GAP;
  }
  const laidEdges: LaidEdge[] = [];
  for (const e of edges) {
    const from = byId.get(e.from);
    const to = byId.get(e.to);
    if (!from || !to) continue;
    // Forward edges leave a node's right side for the next node's left; an edge back (a cycle)
    // leaves its left side, so the arrow still ends on a side of its target.
    const forward = to.x > from.x;
    laidEdges.push({
      id: e.id,
      points: [
        { x: forward ? from.x + from.width : from.x, y: from.y + from.height / 2 },
        { x: forward ? to.x : to.x + to.width, y: to.y + to.height / 2 },
      ],
    });
  }
  return { width: laidNodes.length > 0 ? x - LAYER_GAP + PADDING : 2 * PADDING, height: Math.max(height, 2 * PADDING), nodes: laidNodes, edges: laidEdges };
}
