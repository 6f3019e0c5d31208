/**
 * `audit`: the PostgreSQL audit mirror (PROTOCOL.md section 12, docs/audit.md), a long-running
 * process that copies every stored registry event into PostgreSQL exactly once and answers
 * `history`. `--migrate-only` applies the schema and exits. Logs are JSON lines on stderr.
 */
import { AUDIT_VARIABLES, loadAuditConfig } from "../../config/audit.js";
import { ConfigError } from "../../config/load.js";
import { connectionOptions } from "../../client/connection.js";
import { packageVersion } from "../../version.js";
import { ExitCode, UsageError, connectOptions, type Command, type OptionSpec } from "../context.js";

const flagDoc = (flag: (typeof AUDIT_VARIABLES)[number]["flag"]): string => {
  const v = AUDIT_VARIABLES.find((c) => c.flag === flag)!;
  return `${v.doc} (env ${v.env}${v.default !== undefined ? `, default ${String(v.default)}` : ""})`;
};

const options: Record<string, OptionSpec> = {
  "database-url": { type: "string", value: "URL", description: flagDoc("database-url") },
  "migrate-only": { type: "boolean", description: "apply the schema migrations and exit" },
  "events-stream": { type: "string", value: "NAME", description: flagDoc("events-stream") },
  "batch-size": { type: "string", value: "N", description: flagDoc("batch-size") },
  "retention-days": { type: "string", value: "DAYS", description: flagDoc("retention-days") },
  "http-port": { type: "string", value: "PORT", description: flagDoc("http-port") },
  "http-host": { type: "string", value: "HOST", description: flagDoc("http-host") },
  "http-allowed-hosts": { type: "string", value: "NAMES", description: flagDoc("http-allowed-hosts") },
  "standby-retry": { type: "string", value: "MS", description: flagDoc("standby-retry") },
  "max-retry": { type: "string", value: "MS", description: flagDoc("max-retry") },
  "log-level": { type: "string", value: "LEVEL", description: flagDoc("log-level") },
};

export const auditCommand: Command = {
  name: "audit",
  summary: "mirror every stored registry event into PostgreSQL, exactly once, and answer history queries",
  usage: "audit [--database-url URL] [--migrate-only] [--batch-size N] [--retention-days DAYS] [--http-port PORT]",
  examples: [
    "agent-registry audit --database-url postgres://audit@db:5432/audit",
    "DATABASE_URL=postgres://audit@db/audit agent-registry audit --migrate-only",
  ],
  options,
  args: { min: 0, max: 0 },
  async run(ctx) {
    let config;
    try {
      config = loadAuditConfig(ctx.values, ctx.io.env);
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.problems.join("; "));
      throw e;
    }
    // Loaded here, so the other commands do not load pg.
    const [{ createLogger }, { runAudit, migrateOnly }] = await Promise.all([import("../../kit/create-logger.js"), import("../../audit/run.js")]);
    const log = createLogger({ level: config.logLevel, base: { component: "audit" }, to: "stderr" });
    const until = ctx.io.interrupted();
    if (ctx.values["migrate-only"] === true) {
      await migrateOnly(config, log, until);
      return ExitCode.Ok;
    }
    const nats = connectionOptions({ ...connectOptions(ctx.values, ctx.io.env, ctx.timeoutMs), name: "agent-registry-audit" });
    await runAudit({ config, nats, prefix: ctx.prefix ?? "registry", version: packageVersion(), log, until });
    return ExitCode.Ok;
  },
};
