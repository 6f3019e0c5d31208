/**
 * `check CAPABILITY FILE`: asks the registry whether the JSON payload in FILE fits the
 * capability's input schema (`--output`: a reply against its output schema), PROTOCOL.md
 * section 11.4, and prints every problem with its path. Exit code 0 when it fits, 1 when it
 * does not, so a script can check a task before it sends it.
 */
import { readFileSync } from "node:fs";
import { ExitCode, UsageError, type Command } from "../context.js";

/** The payload of FILE as JSON; a file that cannot be read or parsed is a usage error, named. */
export function readPayload(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`${file} is not JSON: ${(e as Error).message}`);
  }
}

export const checkCommand: Command = {
  name: "check",
  summary: "check a JSON payload against a capability's input (or output) schema",
  usage: "check CAPABILITY FILE [--agent-type TYPE] [--output]",
  examples: [
    "agent-registry check text.summarize task.json",
    "agent-registry check text.summarize reply.json --agent-type summarizer --output",
    "agent-registry check invoice.total task.json --json | jq .errors",
  ],
  options: {
    "agent-type": { type: "string", value: "TYPE", description: "the provider whose schema applies (default: the one lookup lists first)" },
    output: { type: "boolean", description: "check against the output schema (a reply) instead of the input schema" },
  },
  args: { min: 2, max: 2 },
  async run(ctx) {
    const [capability = "", file = ""] = ctx.args;
    const payload = readPayload(file);
    const agentType = ctx.values["agent-type"];
    const direction = ctx.values["output"] === true ? "output" : "input";
    const reply = await (await ctx.client()).check({ capability, payload, direction, ...(typeof agentType === "string" ? { agent_type: agentType } : {}) });
    if (ctx.json) ctx.printJson(reply);
    else {
      const c = ctx.colors;
      const whose = `the ${direction} schema of ${capability} (${reply.agent_type} ${reply.version})`;
      if (reply.valid) ctx.out(`${file}: ${c.green("ok")}, fits ${whose}`);
      else {
        ctx.out(`${file}: ${c.red("invalid")}, ${reply.errors.length} problem${reply.errors.length === 1 ? "" : "s"} with ${whose}`);
        for (const e of reply.errors) ctx.out(`  ${e.path}: ${e.message}`);
      }
    }
    return reply.valid ? ExitCode.Ok : ExitCode.Error;
  },
};
