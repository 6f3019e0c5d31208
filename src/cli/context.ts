/**
 * What every CLI command shares: the common flags, the lazily opened connection, output
 * helpers, and the mapping of failures to exit codes and one-line messages.
 */
import { errors, type NatsConnection } from "@nats-io/nats-core";
import { CONFIG_VARIABLES } from "../config/service.js";
import { connect, type ConnectOptions } from "../client/connection.js";
import { RegistryClientError, RegistryTimeoutError, RegistryUnreachableError, permissionDenied } from "../client/errors.js";
import { RegistryClient } from "../client/registry-client.js";
import { TENANT_RE } from "../protocol/ids.js";
import { AGENT_KINDS, type AgentKind } from "../protocol/spec.js";
import { colorEnabled, colors, type Colors } from "./table.js";

/** Exit codes, documented in the top-level help. */
export const ExitCode = { Ok: 0, Error: 1, Usage: 2, Unreachable: 3, NotFound: 4 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type OptionSpec = {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** Shown after the flag in help, e.g. `--since DURATION`. */
  value?: string;
  description: string;
};

export type CliIo = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  isTTY: boolean;
  /** Resolves on Ctrl-C / SIGTERM; long-running commands (register, watch) wait on it. */
  interrupted: () => Promise<string>;
};

export type Values = Record<string, string | boolean | string[] | undefined>;

export type CommandContext = {
  args: string[];
  values: Values;
  io: CliIo;
  json: boolean;
  colors: Colors;
  prefix: string | undefined;
  /** `--tenant` / REGISTRY_TENANT: the tenant whose view is queried and whose write subjects are used. */
  tenant: string | undefined;
  timeoutMs: number;
  /** Opens the NATS connection on first use; main closes it after the command. */
  nc: () => Promise<NatsConnection>;
  client: () => Promise<RegistryClient>;
  out: (text: string) => void;
  printJson: (value: unknown) => void;
};

export type Command = {
  name: string;
  summary: string;
  /** After `agent-registry `: `lookup CAPABILITY [--status STATUS]...`. */
  usage: string;
  examples: string[];
  options: Record<string, OptionSpec>;
  args: { min: number; max: number };
  run: (ctx: CommandContext) => Promise<number>;
};

export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  nats: { type: "string", value: "URL", description: "NATS server URL(s), comma-separated (env NATS_URL, default nats://127.0.0.1:4222)" },
  user: { type: "string", value: "NAME", description: "NATS user (env NATS_USER)" },
  password: { type: "string", value: "SECRET", description: "NATS password (env NATS_PASSWORD)" },
  token: { type: "string", value: "TOKEN", description: "NATS token (env NATS_TOKEN)" },
  creds: { type: "string", value: "FILE", description: "NATS .creds file (env NATS_CREDS)" },
  nkey: { type: "string", value: "FILE", description: "file holding an nkey seed (env NATS_NKEY_SEED_FILE)" },
  "tls-ca": { type: "string", value: "FILE", description: "CA certificate for TLS (env NATS_TLS_CA)" },
  "tls-cert": { type: "string", value: "FILE", description: "client certificate for TLS (env NATS_TLS_CERT)" },
  "tls-key": { type: "string", value: "FILE", description: "client key for TLS (env NATS_TLS_KEY)" },
  "inbox-prefix": {
    type: "string",
    value: "PREFIX",
    description: "private reply prefix such as _INBOX_operator, needed under deploy/nats/auth.conf (env NATS_INBOX_PREFIX)",
  },
  prefix: { type: "string", value: "PREFIX", description: "registry subject prefix (env REGISTRY_PREFIX, default registry)" },
  tenant: { type: "string", value: "TENANT", description: "query a tenant's view; register and deregister on its subjects (env REGISTRY_TENANT)" },
  timeout: { type: "string", value: "MS", description: "request timeout in milliseconds (default 5000)" },
  json: { type: "boolean", description: "print the raw JSON reply" },
  help: { type: "boolean", short: "h", description: "show this help" },
};

/** A mistake in the command line: exit code 2 and a pointer to --help. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** Could not reach NATS at all (exit code 3). */
export class ConnectFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConnectFailedError";
  }
}

// Flags fall back to the same environment variables as the service (config.ts).
function flagOrEnv(values: Values, env: CliIo["env"], flag: string, fallbackEnv?: string): string | undefined {
  const v = values[flag];
  if (typeof v === "string" && v !== "") return v;
  const name = CONFIG_VARIABLES.find((c) => c.flag === flag)?.env ?? fallbackEnv;
  const fromEnv = name ? env[name] : undefined;
  return fromEnv === "" ? undefined : fromEnv;
}

export function connectOptions(values: Values, env: CliIo["env"], timeoutMs: number): ConnectOptions {
  const get = (flag: string) => flagOrEnv(values, env, flag);
  const tls = { ca: get("tls-ca"), cert: get("tls-cert"), key: get("tls-key") };
  return {
    servers: get("nats"),
    user: get("user"),
    pass: get("password"),
    token: get("token"),
    creds: get("creds"),
    nkeySeed: get("nkey"),
    inboxPrefix: flagOrEnv(values, env, "inbox-prefix", "NATS_INBOX_PREFIX"),
    ...(tls.ca || tls.cert || tls.key ? { tls } : {}),
    name: "agent-registry-cli",
    timeoutMs,
  };
}

export function parseTimeout(values: Values): number {
  const raw = values["timeout"];
  if (raw === undefined) return 5000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--timeout: expected a positive number of milliseconds, got "${String(raw)}"`);
  return n;
}

export function createContext(args: string[], values: Values, io: CliIo): { ctx: CommandContext; close: () => Promise<void> } {
  const timeoutMs = parseTimeout(values);
  const prefix = flagOrEnv(values, io.env, "prefix");
  const tenant = flagOrEnv(values, io.env, "tenant", "REGISTRY_TENANT");
  if (tenant !== undefined && !TENANT_RE.test(tenant)) throw new UsageError(`--tenant: "${tenant}" is not a tenant name (${TENANT_RE.source})`);
  let ncPromise: Promise<NatsConnection> | undefined;
  const nc = () => {
    ncPromise ??= connect(connectOptions(values, io.env, timeoutMs)).catch((e: unknown) => {
      const servers = flagOrEnv(values, io.env, "nats") ?? "nats://127.0.0.1:4222";
      const why = e instanceof Error ? e.message : String(e);
      // Wrong credentials are not an outage: retrying later would not help (exit code 1).
      if (e instanceof errors.AuthorizationError || e instanceof errors.UserAuthenticationExpiredError) {
        throw new Error(`NATS at ${servers} refused the credentials (${why}); check --user/--password, --token, --creds or --nkey`);
      }
      throw new ConnectFailedError(`cannot connect to NATS at ${servers}: ${why}`);
    });
    return ncPromise;
  };
  const ctx: CommandContext = {
    args,
    values,
    io,
    json: values["json"] === true,
    colors: colors(colorEnabled(io.isTTY, io.env)),
    prefix,
    tenant,
    timeoutMs,
    nc,
    client: async () => new RegistryClient(await nc(), { prefix, tenant, timeoutMs }),
    out: (text) => io.stdout(text.endsWith("\n") ? text : `${text}\n`),
    printJson: (value) => io.stdout(`${JSON.stringify(value, null, 2)}\n`),
  };
  const close = async () => {
    if (!ncPromise) return;
    const conn = await ncPromise.catch(() => undefined);
    await conn?.close().catch(() => undefined);
  };
  return { ctx, close };
}

/** The exit code and the one line (plus validation issues) a failure prints to stderr. */
export function describeFailure(e: unknown): { code: ExitCode; lines: string[] } {
  if (e instanceof UsageError) return { code: ExitCode.Usage, lines: [`error: ${e.message}`] };
  if (e instanceof ConnectFailedError || e instanceof RegistryTimeoutError || e instanceof RegistryUnreachableError) {
    return { code: ExitCode.Unreachable, lines: [`error: ${e.message}`] };
  }
  if (e instanceof RegistryClientError) {
    const lines = [`error: ${e.code}: ${withoutFirstIssue(e.message, e.issues[0])}`, ...e.issues.map((i) => `  ${i.path || "(root)"}: ${i.message}`)];
    return { code: e.status === 404 ? ExitCode.NotFound : ExitCode.Error, lines };
  }
  const denied = permissionDenied(e);
  if (denied) return { code: ExitCode.Error, lines: [`error: ${denied.message}`] };
  return { code: ExitCode.Error, lines: [`error: ${e instanceof Error ? e.message : String(e)}`] };
}

/**
 * The registry's message names the first issue (`spec is invalid: a.b: bad (and 2 more)`), and
 * the issues follow one a line: printed as they come, the first problem appeared twice.
 */
function withoutFirstIssue(message: string, first: { path: string; message: string } | undefined): string {
  if (!first) return message;
  const named = `: ${first.path || "(body)"}: ${first.message}`;
  const at = message.indexOf(named);
  if (at < 0 || !/^( \(and \d+ more\))?$/.test(message.slice(at + named.length))) return message;
  return message.slice(0, at);
}

// ---- small helpers for command options ----

export const str = (v: Values[string]): string | undefined => (typeof v === "string" ? v : undefined);
export const strs = (v: Values[string]): string[] => (Array.isArray(v) ? v : typeof v === "string" ? [v] : []);

/** `--tag k=v` pairs into a map; a pair without `=` is a usage error. */
export function keyValues(flag: string, pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const at = p.indexOf("=");
    if (at <= 0) throw new UsageError(`--${flag}: expected KEY=VALUE, got "${p}"`);
    out[p.slice(0, at)] = p.slice(at + 1);
  }
  return out;
}

export function positiveInt(flag: string, v: Values[string]): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${flag}: expected a positive integer, got "${String(v)}"`);
  return n;
}

const STATUSES = ["registered", "ready", "draining", "deregistered"] as const;
export type StatusFilter = (typeof STATUSES)[number];

/** `--status` values, checked here so a typo is a usage error rather than a registry reply. */
export function statusFilter(v: Values[string]): StatusFilter[] | undefined {
  const list = strs(v);
  for (const s of list) {
    if (!(STATUSES as readonly string[]).includes(s)) throw new UsageError(`--status: expected one of ${STATUSES.join(", ")}, got "${s}"`);
  }
  return list.length > 0 ? (list as StatusFilter[]) : undefined;
}

/** `--kind`, checked here so a typo is a usage error rather than a registry reply. */
export function kindFilter(v: Values[string]): AgentKind | undefined {
  const kind = str(v);
  if (kind === undefined) return undefined;
  if (!(AGENT_KINDS as readonly string[]).includes(kind)) throw new UsageError(`--kind: expected one of ${AGENT_KINDS.join(", ")}, got "${kind}"`);
  return kind as AgentKind;
}

/** The `--kind` option of the commands that filter entries by kind (PROTOCOL.md section 10.2). */
export const KIND_OPTION: OptionSpec = { type: "string", value: "KIND", description: `only entries of this kind: ${AGENT_KINDS.join(", ")}` };

/** The `--read-only` option of the commands that can keep read-only capabilities only. */
/** v1.2: providers whose stored spec the registry verified against its tenant's trust roots only (docs/trust.md). */
export const VERIFIED_ONLY_OPTION: OptionSpec = { type: "boolean", description: "only agents whose spec the registry verified (signed by a key the operator trusts; docs/trust.md)" };
export const READ_ONLY_OPTION: OptionSpec = { type: "boolean", description: "only capabilities whose annotations say readOnlyHint: true (MCP tools without side effects)" };
