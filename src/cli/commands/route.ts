/**
 * `route`: which agent the registry would pick for a skill, tags and runtime.
 */
import type { RouteRequest } from "../../client/types.js";
import { ExitCode, UsageError, VERIFIED_ONLY_OPTION, str, strs, type Command, type Values } from "../context.js";
import { deprecationNotes } from "../deprecation-notes.js";
import { renderFields, renderTable } from "../table.js";

export function routeRequest(values: Values): RouteRequest {
  const req: RouteRequest = {};
  const skill = str(values["skill"]);
  const tags = strs(values["tag"]);
  const runtime = str(values["runtime"]);
  if (skill) req.skill = skill;
  if (tags.length > 0) req.tags = tags;
  if (runtime) req.preferred_runtime = runtime;
  if (!skill && tags.length === 0 && !runtime) throw new UsageError("route needs --skill, --tag or --runtime");
  if (values["verified-only"] === true) req.verified_only = true;
  return req;
}

export const routeCommand: Command = {
  name: "route",
  summary: "the best ready agent for a skill, tags and preferred runtime (with the scores)",
  usage: "route [--skill NAME] [--tag TAG]... [--runtime RUNTIME] [--verified-only]",
  examples: ["agent-registry route --skill text.summarize --tag english --tag fast --runtime acp-container"],
  options: {
    skill: { type: "string", value: "NAME", description: "capability the agent must offer (+1.0)" },
    tag: { type: "string", multiple: true, value: "TAG", description: "capability tag wanted (+0.5 each)" },
    runtime: { type: "string", value: "RUNTIME", description: "preferred runtime (+0.1)" },
    "verified-only": VERIFIED_ONLY_OPTION,
  },
  args: { min: 0, max: 0 },
  async run(ctx) {
    // The request is checked before connecting: a usage mistake is exit 2 whether or not NATS answers.
    const request = routeRequest(ctx.values);
    const reply = await (await ctx.client()).route(request);
    if (ctx.json) {
      ctx.printJson(reply);
      return ExitCode.Ok;
    }
    const c = ctx.colors;
    const fields = renderFields(
      [
        ["agent_type", c.bold(reply.agent_type)],
        ["version", reply.version],
        ["score", reply.score],
        ["nats_subject", reply.nats_subject],
        ["consumer_group", reply.consumer_group],
        ["runtime", reply.runtime],
        ["revision", reply.revision],
      ],
      { colors: c },
    );
    const candidates = renderTable(["CANDIDATE", "SCORE"], reply.candidates.map((x) => [x.agent_type, x.score]), { colors: c, right: [1] });
    ctx.out(`${fields}\n\n${candidates}${deprecationNotes(reply.candidates, (x) => x.agent_type)}`);
    return ExitCode.Ok;
  },
};
