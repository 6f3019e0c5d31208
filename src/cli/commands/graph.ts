/**
 * `graph [TYPE]`: what an agent type depends on (or, with `--dependents`, what depends on it),
 * or the whole fleet's dependencies, as a tree with each node's state and the problems found
 * (PROTOCOL.md section 11.2). Exit code 1 when a problem is an error (a cycle), so a deploy
 * script can stop on it.
 */
import type { GraphEdge, GraphNode, GraphReply } from "../../client/types.js";
import { ExitCode, UsageError, str, type Command } from "../context.js";
import type { Colors } from "../table.js";

/** A state's colour, as the statuses it resembles: live as ready, waiting ones yellow, absent ones red. */
function stateColor(c: Colors, state: string): string {
  if (state === "live") return c.green(state);
  if (state === "registered" || state === "version_mismatch") return c.yellow(state);
  return c.red(state);
}

/**
 * The graph as indented trees, one from each root: the agent asked about, or in the whole
 * fleet every node nothing points at (then whatever a cycle left). A node met again is named
 * with "(above)" instead of being expanded twice.
 */
export function renderGraph(reply: Pick<GraphReply, "nodes" | "edges">, c: Colors, opts: { root?: string; dependents?: boolean } = {}): string[] {
  const nodes = new Map(reply.nodes.map((n) => [n.id, n] as const));
  const children = new Map<string, GraphEdge[]>();
  const pointedAt = new Set<string>();
  for (const e of reply.edges) {
    const [parent, child] = opts.dependents ? [e.to, e.from] : [e.from, e.to];
    (children.get(parent) ?? children.set(parent, []).get(parent)!).push(e);
    pointedAt.add(child);
  }
  const lines: string[] = [];
  const shown = new Set<string>();
  const label = (n: GraphNode | undefined, id: string) => (n ? `${n.id}  ${stateColor(c, n.state)}` : id);
  const walk = (id: string, prefix: string, childPrefix: string, via: string | null) => {
    const again = shown.has(id);
    lines.push(`${prefix}${label(nodes.get(id), id)}${via ? c.dim(`  (${via})`) : ""}${again ? c.dim("  (above)") : ""}`);
    if (again) return;
    shown.add(id);
    const kids = children.get(id) ?? [];
    kids.forEach((e, i) => {
      const last = i === kids.length - 1;
      walk(opts.dependents ? e.from : e.to, `${childPrefix}${last ? "└─ " : "├─ "}`, `${childPrefix}${last ? "   " : "│  "}`, e.capability);
    });
  };
  const roots = opts.root !== undefined ? [opts.root] : [...nodes.keys()].filter((id) => !pointedAt.has(id));
  for (const r of roots) walk(r, "", "", null);
  for (const id of nodes.keys()) if (!shown.has(id)) walk(id, "", "", null);
  return lines;
}

export const graphCommand: Command = {
  name: "graph",
  summary: "show what an agent depends on, what depends on it, or the fleet's dependency graph",
  usage: "graph [TYPE] [--dependents] [--depth N]",
  examples: ["agent-registry graph writer", "agent-registry graph postgres-tools --dependents", "agent-registry graph --json | jq '.problems'"],
  options: {
    dependents: { type: "boolean", description: "what depends on TYPE (what breaks when it goes) instead of what it depends on" },
    depth: { type: "string", value: "N", description: "levels to follow from TYPE, 1..16 (default 16)" },
  },
  args: { min: 0, max: 1 },
  async run(ctx) {
    const agentType = ctx.args[0];
    const dependents = ctx.values["dependents"] === true;
    const depthText = str(ctx.values["depth"]);
    const depth = depthText === undefined ? undefined : Number(depthText);
    if (depth !== undefined && !(Number.isInteger(depth) && depth >= 1 && depth <= 16)) throw new UsageError(`--depth: expected a whole number 1..16, got "${depthText}"`);
    if (agentType === undefined && (dependents || depth !== undefined)) throw new UsageError("--dependents and --depth need an agent TYPE");
    const reply = await (await ctx.client()).graph({
      ...(agentType !== undefined ? { agent_type: agentType } : {}),
      ...(dependents ? { direction: "dependents" as const } : {}),
      ...(depth !== undefined ? { depth } : {}),
    });
    if (ctx.json) ctx.printJson(reply);
    else {
      const c = ctx.colors;
      const root = agentType === undefined ? undefined : reply.nodes[0]?.id;
      if (reply.nodes.length === 0) ctx.out("no agent types");
      for (const line of renderGraph(reply, c, { ...(root !== undefined ? { root } : {}), dependents })) ctx.out(line);
      if (reply.problems.length > 0) ctx.out("");
      for (const p of reply.problems) ctx.out(`${p.severity === "error" ? c.red("error") : c.yellow("warning")} ${p.code}${p.path ? ` ${p.path}` : ""}: ${p.message}`);
    }
    return reply.problems.some((p) => p.severity === "error") ? ExitCode.Error : ExitCode.Ok;
  },
};
