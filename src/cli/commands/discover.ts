/**
 * `discover`: agents and whether they can take work now (ready, busy, unavailable).
 */
import type { DiscoverRequest } from "../../client/types.js";
import { ExitCode, KIND_OPTION, VERIFIED_ONLY_OPTION, kindFilter, str, type Command } from "../context.js";
import { deprecationNotes } from "../deprecation-notes.js";
import { renderTable, statusColor } from "../table.js";

export const discoverCommand: Command = {
  name: "discover",
  summary: "agents with their capabilities and availability (ready, busy, unavailable)",
  usage: "discover [--capability NAME] [--kind KIND] [--verified-only]",
  examples: ["agent-registry discover --capability text.summarize", "agent-registry discover --kind mcp_server"],
  options: {
    capability: { type: "string", value: "NAME", description: "only agents offering this capability" },
    kind: KIND_OPTION,
    "verified-only": VERIFIED_ONLY_OPTION,
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    const req: DiscoverRequest = {};
    const capability = str(ctx.values["capability"]);
    if (capability) req.capability = capability;
    const kind = kindFilter(ctx.values["kind"]);
    if (kind) req.kind = kind;
    if (ctx.values["verified-only"] === true) req.verified_only = true;
    const reply = await (await ctx.client()).discoverAll(req);
    if (ctx.json) ctx.printJson(reply);
    else if (reply.agents.length === 0) ctx.out("no agents");
    else {
      const rows = reply.agents.map((a) => [a.id, statusColor(ctx.colors, a.status), a.capabilities.join(",")]);
      ctx.out(renderTable(["AGENT", "STATUS", "CAPABILITIES"], rows, { colors: ctx.colors }) + deprecationNotes(reply.agents, (a) => a.id));
    }
    return ExitCode.Ok;
  },
};
