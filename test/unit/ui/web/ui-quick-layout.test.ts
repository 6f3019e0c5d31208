import { describe, expect, it } from "vitest";
import { quickLayout } from "../../../../src/ui/web/quick-layout.js";
import type { Laid, LaidNode } from "../../../../src/ui/web/layout-types.js";

const box = (id: string) => ({ id, width: 100 + id.length, height: 40 });
const edge = (from: string, to: string) => ({ id: `${from}->${to}`, from, to });

function overlaps(a: LaidNode, b: LaidNode): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function noOverlap(laid: Laid): void {
  const byColumn = new Map<number, LaidNode[]>();
  for (const n of laid.nodes) {
    const column = byColumn.get(n.x);
    if (column) column.push(n);
    else byColumn.set(n.x, [n]);
  }
  for (const column of byColumn.values()) for (let i = 1; i < column.length; i++) expect(overlaps(column[i - 1]!, column[i]!)).toBe(false);
  for (const n of laid.nodes) {
    expect(n.x + n.width).toBeLessThanOrEqual(laid.width);
    expect(n.y + n.height).toBeLessThanOrEqual(laid.height);
  }
}

describe("quickLayout", () => {
  it("puts each node one layer right of its longest path from a node nothing points to", () => {
    // web -> api -> db, web -> db: db is two layers right of web, not one.
    const laid = quickLayout([box("db"), box("api"), box("web")], [edge("web", "api"), edge("api", "db"), edge("web", "db")]);
    const x = Object.fromEntries(laid.nodes.map((n) => [n.id, n.x]));
    expect(x["web"]).toBeLessThan(x["api"]!);
    expect(x["api"]).toBeLessThan(x["db"]!);
    noOverlap(laid);
  });

  it("orders a layer by its predecessors, so a tree's children sit in their parent's order", () => {
    const nodes = ["r", "a", "b", "b1", "a1", "b2", "a2"].map(box);
    const laid = quickLayout(nodes, [edge("r", "a"), edge("r", "b"), edge("b", "b1"), edge("a", "a1"), edge("b", "b2"), edge("a", "a2")]);
    const y = (id: string) => laid.nodes.find((n) => n.id === id)!.y;
    expect(y("a")).toBeLessThan(y("b"));
    // a's children above b's, though b1 came first in the input.
    expect(Math.max(y("a1"), y("a2"))).toBeLessThan(Math.min(y("b1"), y("b2")));
    noOverlap(laid);
  });

  it("draws each edge from its source's side to its target's, and a cycle stored before cycles were refused", () => {
    const laid = quickLayout([box("x"), box("y"), box("z"), box("lone")], [edge("x", "y"), edge("y", "z"), edge("z", "y")]);
    expect(laid.nodes).toHaveLength(4);
    expect(laid.edges).toHaveLength(3);
    const at = (id: string) => laid.nodes.find((n) => n.id === id)!;
    for (const e of laid.edges) {
      const [from, to] = e.id.split("->").map(at) as [LaidNode, LaidNode];
      const [start, end] = e.points as [{ x: number; y: number }, { x: number; y: number }];
      expect([from.x, from.x + from.width]).toContain(start.x);
      expect([to.x, to.x + to.width]).toContain(end.x);
      expect(start.y).toBe(from.y + from.height / 2);
      expect(end.y).toBe(to.y + to.height / 2);
    }
    noOverlap(laid);
  });

  it("lays out a 2,000-node tree, every node once and none overlapping", () => {
    const nodes = Array.from({ length: 2000 }, (_, i) => box(`n${i}`));
    const edges = nodes.slice(1).map((n, i) => edge(`n${(i + 1 - 1) >> 1}`, n.id));
    const laid = quickLayout(nodes, edges);
    expect(new Set(laid.nodes.map((n) => n.id)).size).toBe(2000);
    expect(laid.edges).toHaveLength(1999);
    noOverlap(laid);
    // A binary tree of 2,000 nodes is 11 levels deep.
    expect(new Set(laid.nodes.map((n) => n.x)).size).toBe(11);
  });

  it("an empty graph is an empty picture", () => {
    expect(quickLayout([], [])).toMatchObject({ nodes: [], edges: [] });
  });
});
