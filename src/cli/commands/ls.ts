/**
 * `ls`: every agent type, page after page, as a table.
 */
import type { AgentView, ListRequest } from "../../client/types.js";
import { ExitCode, KIND_OPTION, keyValues, kindFilter, positiveInt, statusFilter, str, strs, type Command, type CommandContext } from "../context.js";
import { renderTable, statusColor } from "../table.js";

export function listRequest(ctx: Pick<CommandContext, "values">): ListRequest {
  const req: ListRequest = {};
  const status = statusFilter(ctx.values["status"]);
  if (status) req.status = status;
  const owner = str(ctx.values["owner"]);
  if (owner) req.owner_team = owner;
  const capability = str(ctx.values["capability"]);
  if (capability) req.capability = capability;
  const tags = strs(ctx.values["tag"]);
  if (tags.length > 0) req.tags = keyValues("tag", tags);
  const kind = kindFilter(ctx.values["kind"]);
  if (kind) req.kind = kind;
  const limit = positiveInt("page-size", ctx.values["page-size"]);
  if (limit) req.limit = limit;
  return req;
}

export const lsCommand: Command = {
  name: "ls",
  summary: "list agent types (all pages), optionally filtered by status, owner, capability, tags or kind",
  usage: "ls [--status STATUS]... [--owner TEAM] [--capability NAME] [--tag KEY=VALUE]... [--kind KIND]",
  examples: ["agent-registry ls --status ready --owner search-team", "agent-registry ls --status deregistered --json", "agent-registry ls --kind mcp_server"],
  options: {
    status: { type: "string", multiple: true, value: "STATUS", description: `registered, ready, draining or deregistered` },
    owner: { type: "string", value: "TEAM", description: "only agents of this owner_team" },
    capability: { type: "string", value: "NAME", description: "only agents offering this capability" },
    tag: { type: "string", multiple: true, value: "KEY=VALUE", description: "only agents with this tag" },
    kind: KIND_OPTION,
    "page-size": { type: "string", value: "N", description: "agents per request, 1..1000 (default 100)" },
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    const req = listRequest(ctx);
    const client = await ctx.client();
    const agents: AgentView[] = [];
    let revision = 0;
    for await (const page of client.listPages(req)) {
      agents.push(...page.agents);
      revision = page.revision;
    }
    if (ctx.json) {
      ctx.printJson({ agents, revision });
      return ExitCode.Ok;
    }
    ctx.out(agentTable(ctx, agents));
    return ExitCode.Ok;
  },
};

/** Agent types as `ls` and `find` print them: a row each, or "no agents". */
export function agentTable(ctx: Pick<CommandContext, "colors">, agents: readonly AgentView[]): string {
  if (agents.length === 0) return "no agents";
  const rows = agents.map((a) => [
    a.agent_type,
    a.version,
    statusColor(ctx.colors, a.status),
    `${a.instances.filter((i) => i.status === "ready").length}/${a.instances.length}`,
    a.owner_team,
    a.capabilities.map((c) => c.name).join(","),
  ]);
  return renderTable(["AGENT TYPE", "VERSION", "STATUS", "READY", "OWNER", "CAPABILITIES"], rows, { colors: ctx.colors, right: [3] });
}
