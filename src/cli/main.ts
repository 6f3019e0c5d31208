#!/usr/bin/env -S node --initial-old-space-size=64 --heap-growing-percent=60
/**
 * The `agent-registry` command: parses the command line, runs one command, and turns the
 * outcome into an exit code. `main()` takes its I/O as an argument so tests run it in-process.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { COMMON_OPTIONS, ExitCode, UsageError, createContext, describeFailure, type CliIo, type Command } from "./context.js";
import { BIN, commandHelp, mainHelp } from "./help.js";
import { packageVersion } from "../version.js";
import { auditCommand } from "./commands/audit.js";
import { approveCommand, pendingCommand, rejectCommand } from "./commands/approval.js";
import { deprecateCommand, undeprecateCommand } from "./commands/deprecation.js";
import { cardCommand } from "./commands/card.js";
import { checkCommand } from "./commands/check.js";
import { deregisterCommand } from "./commands/deregister.js";
import { discoverCommand } from "./commands/discover.js";
import { getCommand } from "./commands/get.js";
import { graphCommand } from "./commands/graph.js";
import { historyCommand } from "./commands/history.js";
import { findCommand } from "./commands/find.js";
import { lookupCommand } from "./commands/lookup.js";
import { lsCommand } from "./commands/ls.js";
import { discoveryCommand } from "./commands/discovery.js";
import { mcpCommand } from "./commands/mcp.js";
import { registerCommand } from "./commands/register.js";
import { routeCommand } from "./commands/route.js";
import { sbomCommand } from "./commands/sbom.js";
import { schemaCommand } from "./commands/schema.js";
import { searchCommand } from "./commands/search.js";
import { trustCommand } from "./commands/trust.js";
import { toolspecCommand } from "./commands/toolspec.js";
import { validateCommand } from "./commands/validate.js";
import { watchCommand } from "./commands/watch.js";

export const COMMANDS: readonly Command[] = [
  lsCommand,
  getCommand,
  lookupCommand,
  routeCommand,
  findCommand,
  searchCommand,
  discoverCommand,
  cardCommand,
  toolspecCommand,
  checkCommand,
  graphCommand,
  sbomCommand,
  schemaCommand,
  registerCommand,
  deregisterCommand,
  pendingCommand,
  approveCommand,
  rejectCommand,
  trustCommand,
  deprecateCommand,
  undeprecateCommand,
  watchCommand,
  historyCommand,
  validateCommand,
  mcpCommand,
  discoveryCommand,
  auditCommand,
];

export const version = packageVersion;

/** Parses a command's arguments; throws UsageError on unknown flags or a wrong argument count. */
export function parseCommandArgs(cmd: Command, argv: string[]): { args: string[]; values: Record<string, string | boolean | string[] | undefined> } {
  const options: ParseArgsConfig["options"] = {};
  for (const [name, o] of Object.entries({ ...COMMON_OPTIONS, ...cmd.options })) {
    options[name] = { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    // Node appends advice about "--" to unknown-option messages; the first sentence is the point.
    throw new UsageError(e instanceof Error ? e.message.replace(/\. To specify a positional.*$/s, "") : String(e));
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  if (values["help"] === true) return { args: parsed.positionals, values };
  const n = parsed.positionals.length;
  if (n < cmd.args.min) throw new UsageError(`missing argument: ${BIN} ${cmd.usage}`);
  if (n > cmd.args.max) throw new UsageError(`unexpected argument "${parsed.positionals[cmd.args.max]}": ${BIN} ${cmd.usage}`);
  return { args: parsed.positionals, values };
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(mainHelp(COMMANDS, version()));
    return ExitCode.Usage;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? COMMANDS.find((c) => c.name === rest[0]) : undefined;
    io.stdout(topic ? commandHelp(topic) : mainHelp(COMMANDS, version()));
    return ExitCode.Ok;
  }
  if (name === "--version" || name === "-V") {
    io.stdout(`${version()}\n`);
    return ExitCode.Ok;
  }
  if (name === "serve") {
    // Loaded only for `serve`, so the client commands do not load the whole service.
    return (await import("./serve.js")).serveCommand(rest);
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    io.stderr(`error: unknown command "${name}"; run ${BIN} --help for the list\n`);
    return ExitCode.Usage;
  }

  let parsed;
  try {
    parsed = parseCommandArgs(cmd, rest);
  } catch (e) {
    io.stderr(`${describeFailure(e).lines.join("\n")}\nrun ${BIN} ${cmd.name} --help for usage\n`);
    return ExitCode.Usage;
  }
  if (parsed.values["help"] === true) {
    io.stdout(commandHelp(cmd));
    return ExitCode.Ok;
  }

  let close = async () => {};
  try {
    const created = createContext(parsed.args, parsed.values, io);
    close = created.close;
    return await cmd.run(created.ctx);
  } catch (e) {
    const { code, lines } = describeFailure(e);
    io.stderr(`${lines.join("\n")}\n`);
    return code;
  } finally {
    await close();
  }
}

/** The process's own I/O: signals resolve `interrupted` (installed only when a command asks). */
export function processIo(): CliIo {
  let interrupted: Promise<string> | undefined;
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    interrupted: () =>
      (interrupted ??= new Promise((resolve) => {
        const on = (signal: string) => {
          // A second Ctrl-C while shutting down means "now".
          process.once("SIGINT", () => process.exit(130));
          resolve(signal);
        };
        process.once("SIGINT", on);
        process.once("SIGTERM", on);
      })),
  };
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  process.exitCode = await main(process.argv.slice(2), processIo());
  // Timers of a closed connection or the SDK must not keep a finished command alive.
  setTimeout(() => process.exit(), 100).unref();
}
