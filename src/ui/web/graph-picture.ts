/**
 * The dependency graph drawn as SVG: laid out by elkjs's layered layout, or by quick-layout.ts
 * past QUICK_LAYOUT_ABOVE nodes; nodes coloured by state, missing and deregistered ones and the
 * edges to them dashed, each node naming an agent type a link to it.
 */
import type { PageGraph } from "../shared.js";
import { fill, h } from "./dom.js";
import { quickLayout } from "./quick-layout.js";

/** The most nodes drawn: a layout of more would hold the page for seconds (layout.ts); a larger fleet is shown by tenant or neighbourhood. */
export const MAX_DRAWN = 2000;
/** Past this many nodes, quick-layout.ts rather than elkjs (layout.ts). */
const QUICK_LAYOUT_ABOVE = 400;
const SVG = "http://www.w3.org/2000/svg";
const NODE_HEIGHT = 40;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<Node | string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

export const label = (n: PageGraph["nodes"][number]): string => `${n.name}@${n.version}`;
export const detail = (n: PageGraph["nodes"][number]): string => `${n.kind} · ${n.state.replace("_", " ")}`;
/** Node width from its longest line: the system font's advance at 12 px is about 8 px bold (the name), 6.5 px regular. */
const widthOf = (n: PageGraph["nodes"][number]): number => Math.max(label(n).length * 8, detail(n).length * 6.5) + 20;

export async function renderGraphPicture(picture: HTMLElement, g: PageGraph): Promise<void> {
  if (g.nodes.length > MAX_DRAWN) {
    fill(picture, h("p", { class: "muted" }, `${g.nodes.length} nodes: too many to draw at once. The table below lists them; open an agent type for the graph around it, or choose a tenant.`));
    return;
  }
  if (g.nodes.length === 0) {
    fill(picture, h("p", { class: "muted" }, "No dependencies here."));
    return;
  }
  // Past QUICK_LAYOUT_ABOVE nodes, elkjs would hold the page for over a second (and load 1.5 MB
  // the first time): the linear-time layout draws the whole shape at once instead.
  const layoutGraph = g.nodes.length > QUICK_LAYOUT_ABOVE ? quickLayout : (await import("./layout.js")).layoutGraph;
  const byId = new Map(g.nodes.map((n) => [n.id, n]));
  // An edge to a node the reply left out (a graph cut to fit) cannot be laid out.
  const edges = g.edges.map((e, i) => ({ id: `e${i}`, from: e.from, to: e.to })).filter((e) => byId.has(e.from) && byId.has(e.to));
  const targetOf = new Map(edges.map((e) => [e.id, e.to]));
  const laid = await layoutGraph(
    g.nodes.map((n) => ({ id: n.id, width: widthOf(n), height: NODE_HEIGHT })),
    edges,
  );
  const drawn = svg(
    "svg",
    { width: Math.ceil(laid.width), height: Math.ceil(laid.height), viewBox: `0 0 ${Math.ceil(laid.width)} ${Math.ceil(laid.height)}`, role: "img", "aria-label": `Dependency graph, ${g.nodes.length} nodes: the table alternative is one click away` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "ge-head" }))),
  );
  for (const e of laid.edges) {
    const target = byId.get(targetOf.get(e.id) ?? "");
    const broken = target !== undefined && (target.state === "missing" || target.state === "deregistered");
    if (e.points.length > 1) drawn.append(svg("path", { d: e.points.map((p, i) => `${i === 0 ? "M" : "L"} ${p.x} ${p.y}`).join(" "), class: broken ? "ge ge-broken" : "ge", "marker-end": "url(#arrow)" }));
  }
  for (const p of laid.nodes) {
    const n = byId.get(p.id);
    if (!n) continue;
    const box = svg(
      "g",
      { class: `gn gn-${n.state}${n.name === g.root ? " gn-root" : ""}`, "data-node": n.id, "data-state": n.state, transform: `translate(${p.x} ${p.y})` },
      svg("title", {}, `${label(n)}: ${detail(n)}`),
      svg("rect", { width: p.width, height: p.height, rx: 6 }),
      svg("text", { x: 10, y: 16, class: "gn-name" }, label(n)),
      svg("text", { x: 10, y: 32, class: "gn-detail" }, detail(n)),
    );
    // A missing dependency names no agent type the registry holds: nothing to open.
    drawn.append(n.state === "missing" ? box : svg("a", { href: `#/agent/${encodeURIComponent(n.name)}`, "aria-label": `${label(n)}, ${detail(n)}` }, box));
  }
  fill(picture, drawn);
}
