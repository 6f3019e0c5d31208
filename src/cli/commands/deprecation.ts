/**
 * Deprecation of an agent type (v1.2, docs/trust.md "Deprecation"): `deprecate TYPE` with a
 * reason and a successor, and `undeprecate TYPE`. Operators only under deploy/nats/auth.conf,
 * as the approval gate's commands.
 */
import type { DeprecationReply } from "../../client/types.js";
import { ExitCode, str, type Command, type CommandContext } from "../context.js";
import { DECISION_OPTIONS, decisionBody } from "./approval.js";

function printDeprecation(ctx: CommandContext, reply: DeprecationReply): ExitCode {
  if (ctx.json) {
    ctx.printJson(reply);
    return ExitCode.Ok;
  }
  const where = reply.tenant_scope === null ? "shared" : `tenant ${reply.tenant_scope}`;
  const d = reply.deprecated;
  const what =
    d === null
      ? "no longer deprecated"
      : `deprecated by ${d.by}${d.reason === undefined ? "" : `: ${d.reason}`}${d.successor === undefined ? "" : `; use ${d.successor}`}`;
  ctx.out(`${reply.agent_type} ${reply.version} (${where}) ${what}; still routable (revision ${reply.revision})`);
  return ExitCode.Ok;
}

export const deprecateCommand: Command = {
  name: "deprecate",
  summary: "mark an agent type deprecated, with why and what to use instead; it stays routable (operators)",
  usage: "deprecate TYPE [--reason TEXT] [--successor TYPE] [--by NAME] [--version VERSION] [--revision N]",
  examples: ["agent-registry deprecate summarizer --reason 'replaced by summarizer-v2' --successor summarizer-v2 --by alice"],
  options: {
    ...DECISION_OPTIONS,
    reason: { type: "string", value: "TEXT", description: "why, shown with the agent type wherever it is found" },
    successor: { type: "string", value: "TYPE", description: "the agent type to use instead" },
  },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reason = str(ctx.values["reason"]);
    const successor = str(ctx.values["successor"]);
    const client = await ctx.client();
    const body = { ...decisionBody(ctx), ...(reason !== undefined ? { reason } : {}), ...(successor !== undefined ? { successor } : {}) };
    return printDeprecation(ctx, await client.deprecate(ctx.args[0] ?? "", body));
  },
};

export const undeprecateCommand: Command = {
  name: "undeprecate",
  summary: "withdraw an agent type's deprecation (operators)",
  usage: "undeprecate TYPE [--reason TEXT] [--by NAME] [--version VERSION] [--revision N]",
  examples: ["agent-registry undeprecate summarizer --reason 'summarizer-v2 rolled back' --by alice"],
  options: { ...DECISION_OPTIONS, reason: { type: "string", value: "TEXT", description: "why, recorded in the event (optional)" } },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reason = str(ctx.values["reason"]);
    const client = await ctx.client();
    return printDeprecation(ctx, await client.undeprecate(ctx.args[0] ?? "", { ...decisionBody(ctx), ...(reason !== undefined ? { reason } : {}) }));
  },
};
