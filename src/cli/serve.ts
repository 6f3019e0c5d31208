/**
 * `agent-registry serve`: runs the service until SIGTERM/SIGINT. Every setting is a flag
 * and an environment variable (flags win); the help text is generated from CONFIG_VARIABLES
 * so it cannot drift from the configuration schema.
 */
import { parseArgs } from "node:util";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../config/service.js";
import { createRegistry } from "../main.js";

export function serveHelp(): string {
  const rows = CONFIG_VARIABLES.map((v) => [`--${v.flag}`, v.env, v.default === undefined ? "" : String(v.default), v.doc] as const);
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return [
    "Usage: agent-registry serve [options]",
    "",
    "Runs the registry: stores AgentSpecs in JetStream KV, tracks instances and evicts them after",
    "missed heartbeats, publishes registry events, answers lookups over NATS request-reply.",
    "With the default NATS URL and no server answering there, it starts a local nats-server",
    "with JetStream in --data-dir (REGISTRY_EMBEDDED=never turns that off).",
    "",
    "Options (flag, environment variable, default):",
    ...rows.map(([f, e, d, doc]) => `  ${f.padEnd(w[0]!)}  ${e.padEnd(w[1]!)}  ${d.padEnd(w[2]!)}  ${doc}`),
    "",
    "Examples:",
    "  $ agent-registry serve",
    "  $ NATS_URL=nats://nats-1:4222,nats://nats-2:4222 REGISTRY_REPLICAS=3 agent-registry serve --http-port 8080",
    "",
    "Exit codes: 0 stopped by a signal, 1 failed to start or stopped on a fatal error, 2 usage error.",
    "",
  ].join("\n");
}

export async function serveCommand(argv: string[]): Promise<number> {
  let flags: Record<string, string | boolean | undefined>;
  try {
    const options: Record<string, { type: "string" | "boolean" }> = { help: { type: "boolean" } };
    for (const v of CONFIG_VARIABLES) options[v.flag] = { type: "string" };
    const parsed = parseArgs({ args: argv, options, allowPositionals: false, strict: true });
    flags = parsed.values as Record<string, string | boolean | undefined>;
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message.split("\n")[0]}\nrun agent-registry serve --help for usage\n`);
    return 2;
  }
  if (flags["help"] === true) {
    process.stdout.write(serveHelp());
    return 0;
  }
  let config;
  try {
    config = loadConfig(process.env, flags);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const registry = createRegistry({ config });
  let signalled = false;
  const onSignal = (signal: string): void => {
    if (signalled) process.exit(130); // a second signal while draining means "now"
    signalled = true;
    void registry.stop(signal);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
  try {
    await registry.start();
  } catch (e) {
    // A signal during the start (still waiting for NATS, say) is a normal stop, not a failure.
    if (signalled) {
      await registry.stopped;
      return 0;
    }
    process.stderr.write(`error: the registry could not start: ${(e as Error).message}\n`);
    return 1;
  }
  await registry.stopped;
  return signalled ? 0 : 1;
}
