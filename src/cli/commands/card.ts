/**
 * `card TYPE`: any registered agent as an A2A Agent Card (PROTOCOL.md section 10.3), printed
 * as the card itself so `agent-registry card x > card.json` writes a file other A2A tools read.
 */
import type { A2aVersion } from "../../client/types.js";
import { ExitCode, UsageError, str, type Command, type Values } from "../context.js";

const VERSIONS: readonly A2aVersion[] = ["1.0", "0.3"];

/** `--a2a-version`, checked here so a typo is a usage error rather than a registry reply. */
export function a2aVersionOption(v: Values[string]): A2aVersion | undefined {
  const version = str(v);
  if (version === undefined) return undefined;
  if (!(VERSIONS as readonly string[]).includes(version)) throw new UsageError(`--a2a-version: expected ${VERSIONS.join(" or ")}, got "${version}"`);
  return version as A2aVersion;
}

export const cardCommand: Command = {
  name: "card",
  summary: "print an agent as an A2A Agent Card (JSON), v1.0 or v0.3",
  usage: "card TYPE [--a2a-version 1.0|0.3]",
  examples: ["agent-registry card summarizer > summarizer.card.json", "agent-registry card summarizer --a2a-version 0.3"],
  options: {
    "a2a-version": { type: "string", value: "VERSION", description: "A2A version of the card: 1.0 (default) or 0.3" },
  },
  args: { min: 1, max: 1 },
  async run(ctx) {
    const a2aVersion = a2aVersionOption(ctx.values["a2a-version"]);
    const reply = await (await ctx.client()).card(ctx.args[0] ?? "", a2aVersion === undefined ? {} : { a2aVersion });
    // --json keeps the reply's revision; otherwise the card alone, ready to save.
    ctx.printJson(ctx.json ? reply : reply.card);
    return ExitCode.Ok;
  },
};
