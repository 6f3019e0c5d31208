/**
 * `find (--skill NAME | --tag TAG | --name NAME)`: the agent types with that skill, capability
 * tag or name (the `find` op of PROTOCOL.md section 4), every page, as `ls` prints them.
 */
import type { FindRequest } from "../../client/types.js";
import { ExitCode, UsageError, VERIFIED_ONLY_OPTION, str, type Command, type Values } from "../context.js";
import { agentTable } from "./ls.js";
import { deprecationNotes } from "../deprecation-notes.js";

/** Exactly one of the three flags, checked before anything is sent. */
export function findRequest(values: Values): FindRequest {
  const given = (["skill", "tag", "name"] as const).flatMap((key) => {
    const value = str(values[key]);
    return value ? [[key, value] as const] : [];
  });
  if (given.length !== 1) throw new UsageError("find needs exactly one of --skill, --tag or --name");
  const [key, value] = given[0]!;
  const request: FindRequest = key === "skill" ? { skill: value } : key === "tag" ? { tag: value } : { name: value };
  if (values["verified-only"] === true) request.verified_only = true;
  return request;
}

export const findCommand: Command = {
  name: "find",
  summary: "agent types by exactly one of: a skill they offer, a capability tag, or their name",
  usage: "find (--skill NAME | --tag TAG | --name NAME) [--verified-only]",
  examples: ["agent-registry find --skill text.summarize", "agent-registry find --tag english --json", "agent-registry find --skill text.summarize --tenant acme --verified-only"],
  options: {
    skill: { type: "string", value: "NAME", description: "agents offering this capability" },
    tag: { type: "string", value: "TAG", description: "agents with a capability carrying this tag" },
    name: { type: "string", value: "NAME", description: "the agent type of this name" },
    "verified-only": VERIFIED_ONLY_OPTION,
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    const request = findRequest(ctx.values);
    const reply = await (await ctx.client()).findAll(request);
    if (ctx.json) ctx.printJson(reply);
    else ctx.out(agentTable(ctx, reply.agents) + deprecationNotes(reply.agents, (a) => a.agent_type));
    return ExitCode.Ok;
  },
};
