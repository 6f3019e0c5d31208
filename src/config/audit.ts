/**
 * Settings of the audit mirror (PROTOCOL.md section 12): `agent-registry audit`, and the mirror
 * `serve` runs with these defaults when given a database URL. The NATS connection, prefix and
 * request timeout are the CLI's common options (src/cli/context.ts). docs/configuration.md
 * lists these rows and a test checks it against this table.
 */
import { z } from "zod";
import { hostList, int, logLevel } from "./fields.js";
import { loadSettings, type Env, type GivenFlag, type SettingSources } from "./load.js";

export const AUDIT_VARIABLES = [
  { key: "databaseUrl", env: "DATABASE_URL", flag: "database-url", default: undefined, doc: "PostgreSQL connection URL of the audit database (required; the password is never logged)" },
  { key: "eventsStream", env: "REGISTRY_EVENTS_STREAM", flag: "events-stream", default: "REGISTRY_EVENTS", doc: "JetStream stream the mirror copies" },
  { key: "batchSize", env: "AUDIT_BATCH_SIZE", flag: "batch-size", default: 500, doc: "events written per transaction at most" },
  { key: "retentionDays", env: "AUDIT_RETENTION_DAYS", flag: "retention-days", default: 0, doc: "delete mirrored events older than this many days (0 keeps everything)" },
  { key: "httpPort", env: "AUDIT_HTTP_PORT", flag: "http-port", default: 9465, doc: "port of /healthz, /readyz and /metrics (0 picks a free port)" },
  { key: "httpHost", env: "AUDIT_HTTP_HOST", flag: "http-host", default: "0.0.0.0", doc: "address the ops server binds to" },
  { key: "httpAllowedHosts", env: "AUDIT_HTTP_ALLOWED_HOSTS", flag: "http-allowed-hosts", default: undefined, doc: "more host names an ops request's Host may name, comma-separated (loopback names and the bound address always; bound to 0.0.0.0 or ::, the machine's interface addresses); others get 421" },
  { key: "standbyRetryMs", env: "AUDIT_STANDBY_RETRY_MS", flag: "standby-retry", default: 2000, doc: "how often a standby mirror tries to become the writer" },
  { key: "maxRetryMs", env: "AUDIT_MAX_RETRY_MS", flag: "max-retry", default: 30000, doc: "longest wait between attempts to reach PostgreSQL or NATS (back-off doubles up to it)" },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "level of the JSON logs written to stderr" },
] as const;

/** The fields of the audit settings; `serve` takes databaseUrl from here. */
export const auditSettingFields = {
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\//, "a postgres:// or postgresql:// URL"),
  eventsStream: z.string().regex(/^[A-Za-z0-9_-]+$/, "a stream name").default("REGISTRY_EVENTS"),
  batchSize: int(1, 10_000).default(500),
  retentionDays: int(0, 365_000).default(0),
  httpPort: int(0, 65535).default(9465),
  httpHost: z.string().min(1).default("0.0.0.0"),
  httpAllowedHosts: hostList.optional(),
  standbyRetryMs: int(10, 600_000).default(2000),
  maxRetryMs: int(10, 600_000).default(30000),
  logLevel,
};

export const auditConfigSchema = z.object(auditSettingFields);

export type AuditConfig = Readonly<z.output<typeof auditConfigSchema>>;

/** Flags win over the environment; an empty variable counts as unset. */
export function loadAuditConfig(flags: Readonly<Record<string, GivenFlag>>, env: Env, overrides?: SettingSources["overrides"]): AuditConfig {
  return loadSettings(AUDIT_VARIABLES, auditConfigSchema, { env, flags, ...(overrides ? { overrides } : {}) });
}
