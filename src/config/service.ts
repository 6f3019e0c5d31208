/**
 * Settings of the service (`agent-registry serve`, and createRegistry for embedders): its own
 * rows, and the MCP front's rows that `serve` also takes (config/mcp.ts), under the `mcp`
 * prefix. Loaded by config/load.ts; every default is in the tables. docs/configuration.md is
 * checked against CONFIG_VARIABLES by a test.
 */
import { z } from "zod";
import { subjectPolicyProblem } from "../domain/spec/subject-rules.js";
import { redactUrl, redactUrls } from "../kit/log-redaction.js";
import { auditSettingFields } from "./audit.js";
import { bool, hostList, int, list, logLevel, optionalString } from "./fields.js";
import { REGION_NAME, regionSettingsProblem } from "./region.js";
import { ConfigError, loadSettings, prefixed, prefixedKey, type Env, type GivenFlag } from "./load.js";
import { DELEGATE_TIMEOUTS_PROBLEM, MCP_VARIABLES, mcpSettingFields } from "./mcp.js";

export { ConfigError };

/** The service's own settings: environment variable, flag, default, and what it does. */
const SERVICE_VARIABLES = [
  { key: "natsUrl", env: "NATS_URL", flag: "nats", default: "nats://127.0.0.1:4222", doc: "NATS server URL(s), comma-separated" },
  { key: "natsUser", env: "NATS_USER", flag: "user", default: undefined, doc: "NATS user name" },
  { key: "natsPassword", env: "NATS_PASSWORD", flag: "password", default: undefined, doc: "NATS password (never logged)" },
  { key: "natsToken", env: "NATS_TOKEN", flag: "token", default: undefined, doc: "NATS auth token (never logged)" },
  { key: "natsCreds", env: "NATS_CREDS", flag: "creds", default: undefined, doc: "path of a NATS .creds file (JWT + nkey seed)" },
  { key: "natsNkeySeedFile", env: "NATS_NKEY_SEED_FILE", flag: "nkey", default: undefined, doc: "path of a file holding an nkey seed" },
  { key: "natsTlsCa", env: "NATS_TLS_CA", flag: "tls-ca", default: undefined, doc: "CA certificate file for TLS" },
  { key: "natsTlsCert", env: "NATS_TLS_CERT", flag: "tls-cert", default: undefined, doc: "client certificate file for TLS" },
  { key: "natsTlsKey", env: "NATS_TLS_KEY", flag: "tls-key", default: undefined, doc: "client key file for TLS" },
  { key: "embedded", env: "REGISTRY_EMBEDDED", flag: "embedded", default: "auto", doc: "start a local nats-server: auto (only when none answers at the default URL), always, never" },
  { key: "dataDir", env: "REGISTRY_DATA_DIR", flag: "data-dir", default: ".data", doc: "data directory of the embedded nats-server" },
  { key: "prefix", env: "REGISTRY_PREFIX", flag: "prefix", default: "registry", doc: "first token of every registry subject" },
  { key: "bucket", env: "REGISTRY_BUCKET", flag: "bucket", default: "agent-registry", doc: "JetStream KV bucket holding specs and instances" },
  { key: "replicas", env: "REGISTRY_REPLICAS", flag: "replicas", default: 1, doc: "replicas of the bucket and of the events stream (3 on a cluster)" },
  { key: "history", env: "REGISTRY_HISTORY", flag: "history", default: 4, doc: "values kept per key in the bucket (1..64); 2 or more lets a start derive events a dead replica never stored" },
  { key: "eventsStream", env: "REGISTRY_EVENTS_STREAM", flag: "events-stream", default: "REGISTRY_EVENTS", doc: "JetStream stream keeping registry events" },
  { key: "eventsMaxAgeMs", env: "REGISTRY_EVENTS_MAX_AGE_MS", flag: "events-max-age-ms", default: 7 * 24 * 3600_000, doc: "how long stored events are kept" },
  { key: "heartbeatEvents", env: "REGISTRY_HEARTBEAT_EVENTS", flag: "heartbeat-events", default: true, doc: "publish registry.agent.heartbeat events (core NATS, not stored)" },
  { key: "missedHeartbeats", env: "REGISTRY_MISSED_HEARTBEATS", flag: "missed-heartbeats", default: 3, doc: "heartbeat intervals without a heartbeat before an instance is evicted" },
  { key: "defaultHeartbeatIntervalMs", env: "REGISTRY_DEFAULT_HEARTBEAT_INTERVAL_MS", flag: "default-heartbeat-interval-ms", default: 30000, doc: "interval given to agents that ask for none" },
  { key: "minHeartbeatIntervalMs", env: "REGISTRY_MIN_HEARTBEAT_INTERVAL_MS", flag: "min-heartbeat-interval-ms", default: 1000, doc: "smallest heartbeat interval accepted (tests use 100)" },
  { key: "maxHeartbeatIntervalMs", env: "REGISTRY_MAX_HEARTBEAT_INTERVAL_MS", flag: "max-heartbeat-interval-ms", default: 3600000, doc: "largest heartbeat interval accepted" },
  { key: "retentionMs", env: "REGISTRY_RETENTION_MS", flag: "retention-ms", default: 24 * 3600_000, doc: "how long a deregistered agent type stays visible to get and list" },
  { key: "maxPayloadBytes", env: "REGISTRY_MAX_PAYLOAD_BYTES", flag: "max-payload-bytes", default: 262144, doc: "largest request body accepted, checked before parsing" },
  { key: "maxMetadataBytes", env: "REGISTRY_MAX_METADATA_BYTES", flag: "max-metadata-bytes", default: 16384, doc: "largest instance metadata accepted, as JSON bytes; over it: 429 limit_exceeded" },
  { key: "maxInstancesPerType", env: "REGISTRY_MAX_INSTANCES_PER_TYPE", flag: "max-instances-per-type", default: 100000, doc: "live instances one agent type may have; a new one past it: 429 limit_exceeded" },
  { key: "maxTypesPerTenant", env: "REGISTRY_MAX_TYPES_PER_TENANT", flag: "max-types-per-tenant", default: 100000, doc: "agent types one tenant (and, apart, the shared agents) may have, deregistered ones in retention included; past it: 429 limit_exceeded" },
  { key: "maxSchemas", env: "REGISTRY_MAX_SCHEMAS", flag: "max-schemas", default: 10000, doc: "versions of named schemas (PROTOCOL.md section 11.1) the registry keeps; a put of a new one past it: 429 limit_exceeded" },
  { key: "bucketMaxBytes", env: "REGISTRY_BUCKET_MAX_BYTES", flag: "bucket-max-bytes", default: 1073741824, doc: "max_bytes of the KV bucket, set when the registry creates it (0 = unlimited); a write to a full bucket: 429 limit_exceeded" },
  { key: "typeMaxBytes", env: "REGISTRY_TYPE_MAX_BYTES", flag: "type-max-bytes", default: undefined, doc: "bytes of the bucket one agent type may hold (its spec and instances, each counted history times); a registration adding past it: 429 limit_exceeded, heartbeats never refused (unset: a tenth of REGISTRY_BUCKET_MAX_BYTES; 0 = no budget)" },
  { key: "tenantMaxBytes", env: "REGISTRY_TENANT_MAX_BYTES", flag: "tenant-max-bytes", default: undefined, doc: "bytes of the bucket one tenant's agent types may hold, and apart from them the shared agents'; counted and refused as REGISTRY_TYPE_MAX_BYTES (unset: half of REGISTRY_BUCKET_MAX_BYTES; 0 = no budget)" },
  { key: "eventsMaxBytes", env: "REGISTRY_EVENTS_MAX_BYTES", flag: "events-max-bytes", default: 1073741824, doc: "max_bytes of the events stream, set when the registry creates it (0 = unlimited); the oldest events go first" },
  { key: "statusChangesPerSecond", env: "REGISTRY_STATUS_CHANGES_PER_SECOND", flag: "status-changes-per-second", default: 1, doc: "stored status changes per instance per second; changes asked for faster are held and the latest is written when allowed (0 = no bound)" },
  { key: "maxDepth", env: "REGISTRY_MAX_DEPTH", flag: "max-depth", default: 64, doc: "deepest JSON nesting accepted in a request" },
  { key: "duplicateCapabilities", env: "REGISTRY_DUPLICATE_CAPABILITIES", flag: "duplicate-capabilities", default: "allow", doc: "allow or reject a capability already provided by another agent type" },
  { key: "subjectPolicy", env: "REGISTRY_SUBJECT_POLICY", flag: "subject-policy", default: undefined, doc: "template every nats_subject must follow, {agent_type} standing for the registering type (e.g. agent.tasks.{agent_type}; a trailing .> also allows subjects under it); unset: any subject" },
  { key: "plainTenantScope", env: "REGISTRY_PLAIN_TENANT_SCOPE", flag: "plain-tenant-scope", default: "allow", doc: "allow (compatible, the default): the plain register subject takes a spec's tenant_scope as before v1.2; refuse: a tenant's agent registers only on its tenant's subject (<prefix>.tenant.<tenant>.register.<agent_type>), which binds agent users to their tenants under per-tenant permissions (deploy/ files set it; docs/security.md, \"Tenants\")" },
  { key: "liveness", env: "REGISTRY_LIVENESS", flag: "liveness", default: "store", doc: "store: every heartbeat is a stored write; memory: heartbeats are answered from memory and told to the other replicas, the store written only when something durable changes (docs/architecture.md, \"Scale\"; needs publish and subscribe on <prefix>._replica.>)" },
  { key: "fanoutPeriodMs", env: "REGISTRY_FANOUT_PERIOD_MS", flag: "fanout-period-ms", default: 20, doc: "memory liveness: how long a replica gathers the heartbeats it answered before telling the others in one message (1..10000); longer only makes deadlines later, and costs marks and clears once it nears 1.5 heartbeat intervals" },
  { key: "leaseMs", env: "REGISTRY_LEASE_MS", flag: "lease-ms", default: 5000, doc: "evictor lease: a replica that stops renewing loses eviction duty after this long" },
  { key: "evictionTickMs", env: "REGISTRY_EVICTION_TICK_MS", flag: "eviction-tick-ms", default: 250, doc: "how often the evicting replica checks deadlines" },
  { key: "selfPreservationRatio", env: "REGISTRY_SELF_PRESERVATION_RATIO", flag: "self-preservation-ratio", default: 0, doc: "pause evictions when more than this share of live instances would go in one window (0 = off)" },
  { key: "typeRateLimit", env: "REGISTRY_TYPE_RATE_LIMIT", flag: "type-rate-limit", default: 0, doc: "write requests (register, heartbeat, deregister) per second per agent type, bursts of twice that; over it: 503 unavailable (0 = no limit)" },
  { key: "typeSpecCheckMs", env: "REGISTRY_TYPE_SPEC_CHECK_MS", flag: "type-spec-check-ms", default: 100, doc: "milliseconds per second of spec validation (resolving schemas' $refs, compiling schemas) one agent type may use, bursts of 20 s worth; over it: 503 unavailable (0 = no limit)" },
  { key: "maxRevisionWaiters", env: "REGISTRY_MAX_REVISION_WAITERS", flag: "max-revision-waiters", default: 1000, doc: "queries that may wait for min_revision on one replica at once; past it: 503 stale_view at once" },
  { key: "maxHeartbeatWrites", env: "REGISTRY_MAX_HEARTBEAT_WRITES", flag: "max-heartbeat-writes", default: 1000, doc: "instances whose heartbeat may wait for a store write at once (every heartbeat under store liveness; under memory liveness only those that change something durable); past it: 503 unavailable at once, counted as shed, and evictions wait a whole window as after a store failure" },
  { key: "loadWorkerMinEntries", env: "REGISTRY_LOAD_WORKER_MIN_ENTRIES", flag: "load-worker-min-entries", default: 250000, doc: "a start reads a bucket of at least this many entries in a worker thread, on a connection of its own (agent-registry:<replica>:loader, closed after), while the main thread applies them; 0 = always in the main thread" },
  { key: "schemaWorkers", env: "REGISTRY_SCHEMA_WORKERS", flag: "schema-workers", default: 0, doc: "worker threads compiling capability schemas off the event loop (0 = min(2, cores - 1))" },
  { key: "schemaCheckQueue", env: "REGISTRY_SCHEMA_CHECK_QUEUE", flag: "schema-check-queue", default: 1024, doc: "schemas that may wait for a worker (at least 512, a whole spec's); past it registrations get 503 unavailable" },
  { key: "schemaCheckTimeoutMs", env: "REGISTRY_SCHEMA_CHECK_TIMEOUT_MS", flag: "schema-check-timeout-ms", default: 5000, doc: "longest compilation of one schema; past it the worker is replaced and the schema refused" },
  { key: "payloadCheckWorkers", env: "REGISTRY_PAYLOAD_CHECK_WORKERS", flag: "payload-check-workers", default: 0, doc: "worker threads checking payloads for the check op (and tasks_delegate) off the event loop (0 = min(2, cores - 1))" },
  { key: "payloadCheckQueue", env: "REGISTRY_PAYLOAD_CHECK_QUEUE", flag: "payload-check-queue", default: 256, doc: "payload checks that may wait for a worker; past it a check gets 503 unavailable" },
  { key: "payloadCheckTimeoutMs", env: "REGISTRY_PAYLOAD_CHECK_TIMEOUT_MS", flag: "payload-check-timeout-ms", default: 1000, doc: "longest check of one payload (the schema's compilation apart, bounded by REGISTRY_SCHEMA_CHECK_TIMEOUT_MS), and longest wait for a worker; a check past it is stopped (the worker replaced) and refused with 429 limit_exceeded, one that waited that long gets 503 unavailable" },
  { key: "requestTimeoutMs", env: "REGISTRY_REQUEST_TIMEOUT_MS", flag: "request-timeout-ms", default: 5000, doc: "timeout of JetStream API calls and store writes" },
  { key: "httpPort", env: "REGISTRY_HTTP_PORT", flag: "http-port", default: 8080, doc: "ops HTTP server port (/metrics /healthz /readyz); 0 picks a free port" },
  { key: "httpHost", env: "REGISTRY_HTTP_HOST", flag: "http-host", default: "0.0.0.0", doc: "ops HTTP server address" },
  { key: "httpAllowedHosts", env: "REGISTRY_HTTP_ALLOWED_HOSTS", flag: "http-allowed-hosts", default: undefined, doc: "more host names an ops request's Host may name, comma-separated (loopback names and the bound address always; bound to 0.0.0.0 or ::, the machine's interface addresses); others get 421" },
  { key: "ui", env: "REGISTRY_UI", flag: "ui", default: true, doc: "serve the operator's web page at /ui/ on the ops server (docs/ui.md); false turns it off" },
  { key: "uiToken", env: "REGISTRY_UI_TOKEN", flag: "ui-token", default: undefined, doc: "token the web page and its feed require (bearer header, basic auth password, cookie or ?token=; never logged)" },
  { key: "uiMaxClients", env: "REGISTRY_UI_MAX_CLIENTS", flag: "ui-max-clients", default: 64, doc: "open /ui/events streams at most; one more is refused with 503" },
  { key: "databaseUrl", env: "DATABASE_URL", flag: "database-url", default: undefined, doc: "also run the audit mirror (docs/audit.md) against this PostgreSQL database, with its default settings; unset: off (the password is never logged)" },
  { key: "cardSigningKey", env: "REGISTRY_CARD_SIGNING_KEY", flag: "card-signing-key", default: undefined, doc: "file of a private JWK (kid, alg ES256 or EdDSA) with which the registry signs the A2A cards it exports, its public key served at /.well-known/jwks.json (docs/trust.md); unset: exported cards are unsigned" },
  { key: "trustFile", env: "REGISTRY_TRUST_FILE", flag: "trust-file", default: undefined, doc: "JSON file of the tenants' trust roots, modes and approval policies (docs/trust.md): signed specs and cards are verified at registration, and under approval manual new specs wait for an operator; unset: trust off and approval auto for every tenant (v1.1 behaviour)" },
  { key: "trustJwksCaFile", env: "REGISTRY_TRUST_JWKS_CA_FILE", flag: "trust-jwks-ca-file", default: undefined, doc: "PEM file of CA certificates trusted, beside the system's, for the trust file's jwks_url fetches (a private CA); unset: the system's only" },
  { key: "trustJwksAllowPrivate", env: "REGISTRY_TRUST_JWKS_ALLOW_PRIVATE", flag: "trust-jwks-allow-private", default: false, doc: "TEST ONLY: lets jwks_url reach loopback and private addresses (the tests' local https server); never set it in production, where a JWKS URL must resolve to public addresses only" },
  { key: "registryFile", env: "REGISTRY_FILE", flag: "registry-file", default: undefined, doc: "static registry file loaded at start and reloaded on change" },
  { key: "region", env: "REGISTRY_REGION", flag: "region", default: undefined, doc: "regional mode: this replica's region, also the name of the NATS cluster it connects to; the region gets its own bucket (<REGISTRY_BUCKET>-<region>) and events stream (<REGISTRY_EVENTS_STREAM>_<region>) placed in that cluster, and its own evictor (needs nats-server 2.10+; docs/operations.md, \"Running regions\"); unset: one registry for the whole NATS system" },
  { key: "regions", env: "REGISTRY_REGIONS", flag: "regions", default: undefined, doc: "regional mode: every region of the supercluster, comma-separated (e.g. eu,us,ap), REGISTRY_REGION among them" },
  { key: "remoteStaleMs", env: "REGISTRY_REMOTE_STALE_MS", flag: "remote-stale-ms", default: 30000, doc: "regional mode: how long the mirror of another region's bucket may go without hearing from that region before its entries are marked stale (kept, never evicted here)" },
  { key: "replicaName", env: "REGISTRY_REPLICA_NAME", flag: "replica-name", default: undefined, doc: "name of this replica in logs, lease and metrics (default host-pid)" },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "pino log level: trace, debug, info, warn, error, fatal, silent" },
] as const;

/** The MCP front's rows that `serve` takes too, under the `mcp` prefix and `serve`'s own flag. */
const SERVE_MCP_VARIABLES = MCP_VARIABLES.flatMap((row) =>
  "serve" in row ? [{ key: prefixedKey("mcp", row.key), env: row.env, flag: row.serve.flag, default: row.default, doc: row.serve.doc }] : [],
);

/** One row per setting: environment variable, flag, default, and what it does. */
export const CONFIG_VARIABLES = [...SERVICE_VARIABLES, ...SERVE_MCP_VARIABLES];

const { logLevel: _mcpLogLevel, ...servedMcpFields } = mcpSettingFields;

export const configSchema = z.object({
  natsUrl: z.string().min(1).default("nats://127.0.0.1:4222"),
  natsUser: optionalString,
  natsPassword: optionalString,
  natsToken: optionalString,
  natsCreds: optionalString,
  natsNkeySeedFile: optionalString,
  natsTlsCa: optionalString,
  natsTlsCert: optionalString,
  natsTlsKey: optionalString,
  embedded: z.enum(["auto", "always", "never"]).default("auto"),
  dataDir: z.string().min(1).default(".data"),
  prefix: z.string().regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "dot-separated subject tokens").default("registry"),
  bucket: z.string().regex(/^[A-Za-z0-9_-]+$/, "a KV bucket name").default("agent-registry"),
  replicas: int(1, 5).default(1),
  history: int(1, 64).default(4),
  eventsStream: z.string().regex(/^[A-Za-z0-9_-]+$/, "a stream name").default("REGISTRY_EVENTS"),
  eventsMaxAgeMs: int(1000).default(7 * 24 * 3600_000),
  heartbeatEvents: bool.default(true),
  missedHeartbeats: int(1, 100).default(3),
  defaultHeartbeatIntervalMs: int(1).default(30000),
  minHeartbeatIntervalMs: int(1).default(1000),
  maxHeartbeatIntervalMs: int(1).default(3600000),
  retentionMs: int(0).default(24 * 3600_000),
  maxPayloadBytes: int(256, 64 * 1024 * 1024).default(262144),
  maxMetadataBytes: int(2, 16 * 1024 * 1024).default(16384),
  maxInstancesPerType: int(1).default(100000),
  maxTypesPerTenant: int(1).default(100000),
  maxSchemas: int(1).default(10000),
  bucketMaxBytes: int(0).default(1073741824),
  typeMaxBytes: int(0).optional(),
  tenantMaxBytes: int(0).optional(),
  eventsMaxBytes: int(0).default(1073741824),
  statusChangesPerSecond: z.coerce.number().min(0).max(1000).default(1),
  maxDepth: int(2, 1000).default(64),
  duplicateCapabilities: z.enum(["allow", "reject"]).default("allow"),
  subjectPolicy: optionalString.refine((p) => p === undefined || subjectPolicyProblem(p) === null, {
    error: (issue) => subjectPolicyProblem(String(issue.input)) ?? "invalid subject policy",
  }),
  plainTenantScope: z.enum(["refuse", "allow"]).default("allow"),
  liveness: z.enum(["store", "memory"]).default("store"),
  fanoutPeriodMs: int(1, 10_000).default(20),
  leaseMs: int(200).default(5000),
  evictionTickMs: int(10, 10000).default(250),
  selfPreservationRatio: z.coerce.number().min(0).max(1).default(0),
  typeRateLimit: z.coerce.number().min(0).default(0),
  typeSpecCheckMs: int(0).default(100),
  maxRevisionWaiters: int(1, 1_000_000).default(1000),
  maxHeartbeatWrites: int(1, 1_000_000).default(1000),
  loadWorkerMinEntries: int(0).default(250_000),
  schemaWorkers: int(0, 64).default(0),
  schemaCheckQueue: int(512).default(1024),
  schemaCheckTimeoutMs: int(100).default(5000),
  payloadCheckWorkers: int(0, 64).default(0),
  payloadCheckQueue: int(1, 100_000).default(256),
  payloadCheckTimeoutMs: int(10, 600_000).default(1000),
  requestTimeoutMs: int(100).default(5000),
  httpPort: int(0, 65535).default(8080),
  httpHost: z.string().min(1).default("0.0.0.0"),
  httpAllowedHosts: hostList.optional(),
  ui: bool.default(true),
  uiToken: optionalString,
  uiMaxClients: int(1, 10_000).default(64),
  registryFile: optionalString,
  trustFile: optionalString,
  trustJwksCaFile: optionalString,
  trustJwksAllowPrivate: bool.default(false),
  cardSigningKey: optionalString,
  databaseUrl: auditSettingFields.databaseUrl.optional(),
  region: optionalString,
  regions: list.optional(),
  remoteStaleMs: int(100).default(30000),
  replicaName: optionalString,
  logLevel,
  ...prefixed("mcp", servedMcpFields),
})
  .refine((c) => c.mcpDelegateTimeoutMs <= c.mcpMaxDelegateTimeoutMs, {
    message: DELEGATE_TIMEOUTS_PROBLEM,
    path: ["mcpDelegateTimeoutMs"],
  })
  .refine((c) => c.minHeartbeatIntervalMs <= c.maxHeartbeatIntervalMs, {
    message: "REGISTRY_MIN_HEARTBEAT_INTERVAL_MS must not exceed REGISTRY_MAX_HEARTBEAT_INTERVAL_MS",
    path: ["minHeartbeatIntervalMs"],
  })
  .superRefine((c, ctx) => {
    const problem = regionSettingsProblem(c);
    if (problem !== null) ctx.addIssue({ code: "custom", message: problem, path: [c.region === undefined || !REGION_NAME.test(c.region) ? "region" : "regions"] });
  });

export type Config = Readonly<z.infer<typeof configSchema>>;
export type ConfigInput = Partial<z.input<typeof configSchema>>;

/**
 * Builds the configuration from the environment, then flags (flags win), then `overrides`
 * (used by tests and embedding code). Errors name the variable or flag that was wrong.
 */
export function loadConfig(env: Env = {}, flags: Readonly<Record<string, GivenFlag>> = {}, overrides: ConfigInput = {}): Config {
  return loadSettings(CONFIG_VARIABLES, configSchema, { env, flags, overrides });
}

/** The configuration as it may be logged: secrets replaced. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of ["natsPassword", "natsToken", "mcpToken", "uiToken"] as const) if (out[key] !== undefined) out[key] = "[redacted]";
  // A URL may carry a password or token of its own: in its user info, or as libpq's ?password=.
  out["natsUrl"] = redactUrls(config.natsUrl);
  if (typeof out["databaseUrl"] === "string") out["databaseUrl"] = redactUrl(out["databaseUrl"]);
  return out;
}
