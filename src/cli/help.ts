/**
 * Help texts, built from the command definitions so a new flag cannot be left undocumented.
 */
import { COMMON_OPTIONS, type Command, type OptionSpec } from "./context.js";

export const BIN = "agent-registry";

export const EXIT_CODES_HELP = [
  "Exit codes:",
  "  0  success",
  "  1  error reply from the registry, validation failure, or refused by NATS (credentials, permissions)",
  "  2  usage error (unknown command or flag, missing argument)",
  "  3  registry or NATS unreachable, or no answer in time",
  "  4  not found (unknown agent type or instance, no route)",
].join("\n");

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`;
    return [flag, `${o.description}${o.multiple ? " (repeatable)" : ""}`] as const;
  });
  const width = Math.max(0, ...rows.map(([f]) => f.length));
  return rows.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`);
}

export function commandHelp(cmd: Command): string {
  const lines = [`Usage: ${BIN} ${cmd.usage}`, "", cmd.summary, ""];
  if (Object.keys(cmd.options).length > 0) lines.push("Options:", ...optionLines(cmd.options), "");
  lines.push("Common options:", ...optionLines(COMMON_OPTIONS), "");
  lines.push(cmd.examples.length > 1 ? "Examples:" : "Example:", ...cmd.examples.map((e) => `  $ ${e}`), "");
  lines.push(EXIT_CODES_HELP, "");
  return lines.join("\n");
}

export function mainHelp(commands: readonly Command[], version: string): string {
  const width = Math.max(...commands.map((c) => c.name.length), "serve".length);
  return [
    `${BIN} ${version}: a NATS-native registry of AI agents`,
    "",
    `Usage: ${BIN} <command> [arguments] [options]`,
    "",
    "Commands:",
    `  ${"serve".padEnd(width)}  run the registry service (see ${BIN} serve --help)`,
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Common options (every command but serve; validate works offline and uses only --json):",
    ...optionLines(COMMON_OPTIONS),
    "",
    "Examples:",
    `  $ ${BIN} ls --status ready`,
    `  $ ${BIN} lookup text.summarize`,
    `  $ ${BIN} watch --since 1h`,
    "",
    `Run ${BIN} <command> --help for the options and an example of each command.`,
    `  ${BIN} --version  prints the version`,
    "",
    EXIT_CODES_HELP,
    "",
  ].join("\n");
}
