/**
 * `search TEXT`: keyword search over capabilities, tags, examples and descriptions.
 */
import type { SearchRequest } from "../../client/types.js";
import { ExitCode, KIND_OPTION, READ_ONLY_OPTION, VERIFIED_ONLY_OPTION, kindFilter, positiveInt, type Command } from "../context.js";
import { deprecationNotes } from "../deprecation-notes.js";
import { renderTable } from "../table.js";

export const searchCommand: Command = {
  name: "search",
  summary: "keyword search over capability names, descriptions, tags, examples and agent descriptions",
  usage: "search TEXT... [--limit N] [--kind KIND] [--read-only] [--verified-only]",
  examples: ["agent-registry search summarize long documents --limit 5", "agent-registry search read files --kind mcp_server --read-only"],
  options: {
    limit: { type: "string", value: "N", description: "results to return, 1..100 (default 10)" },
    kind: KIND_OPTION,
    "read-only": READ_ONLY_OPTION,
    "verified-only": VERIFIED_ONLY_OPTION,
  },
  args: { min: 1, max: Number.POSITIVE_INFINITY },
  async run(ctx) {
    const req: SearchRequest = { query: ctx.args.join(" ") };
    const limit = positiveInt("limit", ctx.values["limit"]);
    if (limit) req.limit = limit;
    const kind = kindFilter(ctx.values["kind"]);
    if (kind) req.kind = kind;
    if (ctx.values["read-only"] === true) req.read_only = true;
    if (ctx.values["verified-only"] === true) req.verified_only = true;
    const reply = await (await ctx.client()).search(req);
    if (ctx.json) ctx.printJson(reply);
    else if (reply.results.length === 0) ctx.out(`no match for "${req.query}"`);
    else {
      const rows = reply.results.map((r) => [r.agent_type, r.capability, r.score.toFixed(3)]);
      ctx.out(renderTable(["AGENT TYPE", "CAPABILITY", "SCORE"], rows, { colors: ctx.colors, right: [2] }) + deprecationNotes(reply.results, (r) => r.agent_type));
    }
    return ExitCode.Ok;
  },
};
