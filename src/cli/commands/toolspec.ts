/**
 * `toolspec TYPE`: any registered agent's capabilities as MCP tools (PROTOCOL.md section 10.3),
 * printed as a `tools/list` result, `{"tools": [...]}`, the shape an MCP client reads and the
 * one `register` takes back.
 */
import { ExitCode, type Command } from "../context.js";

export const toolspecCommand: Command = {
  name: "toolspec",
  summary: "print an agent's capabilities as an MCP tools/list result (JSON)",
  usage: "toolspec TYPE",
  examples: ["agent-registry toolspec summarizer > summarizer.tools.json", "agent-registry toolspec summarizer --json | jq .revision"],
  options: {},
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reply = await (await ctx.client()).toolspec(ctx.args[0] ?? "");
    // --json keeps the reply's revision; otherwise exactly what tools/list would answer.
    ctx.printJson(ctx.json ? reply : { tools: reply.tools });
    return ExitCode.Ok;
  },
};
