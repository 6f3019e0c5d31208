/**
 * `get TYPE`: one agent type with its spec and live instances.
 */
import type { AgentView } from "../../client/types.js";
import { ExitCode, type Command, type CommandContext } from "../context.js";
import { deprecationWords } from "../deprecation-notes.js";
import { renderFields, renderTable, statusColor } from "../table.js";

export function renderAgent(ctx: Pick<CommandContext, "colors">, a: AgentView): string {
  const c = ctx.colors;
  const tags = Object.entries(a.tags ?? {}).map(([k, v]) => `${k}=${v}`);
  const fields = renderFields(
    [
      ["agent_type", c.bold(a.agent_type)],
      ["version", a.version],
      ["status", statusColor(c, a.status)],
      ["description", a.description],
      ["owner_team", a.owner_team],
      ["nats_subject", a.nats_subject],
      ["consumer_group", a.consumer_group],
      ["runtime", a.runtime],
      ["tenant_scope", a.tenant_scope],
      ["weight", a.weight],
      ["tags", tags.length > 0 ? tags.join(" ") : undefined],
      ["registered_at", a.registered_at],
      ["last_heartbeat", a.last_heartbeat],
      ["revision", a.revision],
      ["deprecated", a.deprecated === undefined ? undefined : `yes,${deprecationWords(a.deprecated)} (at ${a.deprecated.at})`],
    ],
    { colors: c },
  );
  const caps = renderTable(
    ["CAPABILITY", "CONFIDENCE", "TAGS", "DESCRIPTION"],
    a.capabilities.map((cap) => [cap.name, cap.confidence_hint, (cap.tags ?? []).join(","), cap.description]),
    { colors: c, right: [1] },
  );
  const instances =
    a.instances.length === 0
      ? "no live instances"
      : renderTable(
          ["INSTANCE", "VERSION", "STATUS", "TASKS", "INTERVAL MS", "LAST HEARTBEAT"],
          a.instances.map((i) => [i.instance_id, i.version, statusColor(c, i.status), i.active_tasks, i.heartbeat_interval_ms, i.last_heartbeat]),
          { colors: c, right: [3, 4] },
        );
  return `${fields}\n\n${caps}\n\n${instances}`;
}

export const getCommand: Command = {
  name: "get",
  summary: "show one agent type: spec, capabilities and live instances",
  usage: "get TYPE",
  examples: ["agent-registry get summarizer", "agent-registry get summarizer --json | jq .agent.instances"],
  options: {},
  args: { min: 1, max: 1 },
  async run(ctx) {
    const reply = await (await ctx.client()).getAll(ctx.args[0] ?? "");
    if (ctx.json) ctx.printJson(reply);
    else ctx.out(renderAgent(ctx, reply.agent));
    return ExitCode.Ok;
  },
};
