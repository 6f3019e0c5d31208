/**
 * Settings of `agent-registry audit`, the PostgreSQL mirror (PROTOCOL.md section 12), from
 * flags and environment variables (flags win), parsed once with zod and frozen. The NATS
 * connection, prefix and request timeout are the CLI's common options (src/cli/context.ts).
 * docs/configuration.md lists these rows and a test checks it against this table.
 */
import { z } from "zod";

export const AUDIT_VARIABLES = [
  { key: "databaseUrl", env: "DATABASE_URL", flag: "database-url", default: undefined, doc: "PostgreSQL connection URL of the audit database (required; the password is never logged)" },
  { key: "eventsStream", env: "REGISTRY_EVENTS_STREAM", flag: "events-stream", default: "REGISTRY_EVENTS", doc: "JetStream stream the mirror copies" },
  { key: "batchSize", env: "AUDIT_BATCH_SIZE", flag: "batch-size", default: 500, doc: "events written per transaction at most" },
  { key: "retentionDays", env: "AUDIT_RETENTION_DAYS", flag: "retention-days", default: 0, doc: "delete mirrored events older than this many days (0 keeps everything)" },
  { key: "httpPort", env: "AUDIT_HTTP_PORT", flag: "http-port", default: 9465, doc: "port of /healthz, /readyz and /metrics (0 picks a free port)" },
  { key: "httpHost", env: "AUDIT_HTTP_HOST", flag: "http-host", default: "0.0.0.0", doc: "address the ops server binds to" },
  { key: "standbyRetryMs", env: "AUDIT_STANDBY_RETRY_MS", flag: "standby-retry", default: 2000, doc: "how often a standby mirror tries to become the writer" },
  { key: "maxRetryMs", env: "AUDIT_MAX_RETRY_MS", flag: "max-retry", default: 30000, doc: "longest wait between attempts to reach PostgreSQL or NATS (back-off doubles up to it)" },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "level of the JSON logs written to stderr" },
] as const;

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const auditConfigSchema = z.object({
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL"),
  eventsStream: z.string().regex(/^[A-Za-z0-9_-]+$/, "a stream name").default("REGISTRY_EVENTS"),
  batchSize: int(1, 10_000).default(500),
  retentionDays: int(0, 365_000).default(0),
  httpPort: int(0, 65535).default(9465),
  httpHost: z.string().min(1).default("0.0.0.0"),
  standbyRetryMs: int(10, 600_000).default(2000),
  maxRetryMs: int(10, 600_000).default(30000),
  logLevel: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
});

export type AuditConfig = Readonly<z.output<typeof auditConfigSchema>>;

export class AuditConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuditConfigError";
  }
}

type Given = string | boolean | string[] | undefined;

/** Flags win over the environment; an empty variable counts as unset. Errors name the flag and the variable. */
export function loadAuditConfig(flags: Readonly<Record<string, Given>>, env: Readonly<Record<string, string | undefined>>): AuditConfig {
  const raw: Record<string, unknown> = {};
  for (const v of AUDIT_VARIABLES) {
    const fromEnv = env[v.env];
    if (fromEnv !== undefined && fromEnv !== "") raw[v.key] = fromEnv;
    const fromFlag = flags[v.flag];
    if (fromFlag !== undefined) raw[v.key] = fromFlag;
  }
  const parsed = auditConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const v = AUDIT_VARIABLES.find((c) => c.key === issue.path[0]);
      const what = issue.code === "invalid_type" && raw[String(issue.path[0])] === undefined ? "required" : issue.message;
      return `${v ? `--${v.flag} / ${v.env}` : String(issue.path[0] ?? "")}: ${what}`;
    });
    throw new AuditConfigError(lines.join("; "));
  }
  return Object.freeze(parsed.data);
}
