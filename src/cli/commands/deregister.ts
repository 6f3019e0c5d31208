/**
 * `deregister TYPE [INSTANCE]`: remove one instance, or (operator action) every instance.
 */
import { ExitCode, str, type Command } from "../context.js";

export const deregisterCommand: Command = {
  name: "deregister",
  summary: "remove one instance of an agent type, or every instance when none is named",
  usage: "deregister TYPE [INSTANCE] [--reason TEXT]",
  examples: ["agent-registry deregister summarizer 7f3a9c", "agent-registry deregister summarizer --reason 'retired'"],
  options: { reason: { type: "string", value: "TEXT", description: "free text sent with the request (the stored event says graceful or operator)" } },
  args: { min: 1, max: 2 },
  async run(ctx) {
    const [agentType = "", instanceId] = ctx.args;
    const reason = str(ctx.values["reason"]);
    const body = reason ? { reason } : {};
    const client = await ctx.client();
    const reply = instanceId === undefined ? await client.deregisterType(agentType, body) : await client.deregister(agentType, instanceId, body);
    if (ctx.json) {
      ctx.printJson(reply);
      return ExitCode.Ok;
    }
    const what = instanceId === undefined ? `every instance of ${agentType}` : `${agentType}/${instanceId}`;
    const removed = reply.agent_removed ? `; ${agentType} has no instance left` : "";
    ctx.out(`deregistered ${what} (revision ${reply.revision})${removed}`);
    return ExitCode.Ok;
  },
};
