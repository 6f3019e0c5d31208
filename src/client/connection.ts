/**
 * NATS connection options for agents, coordinators and the CLI. The nats.js defaults suit a
 * short script; an agent is a daemon, so it must never give up reconnecting and must notice a
 * dead link in seconds rather than minutes (NATS-NOTES.md section 3).
 */
import { readFileSync } from "node:fs";
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type ConnectionOptions,
  type NatsConnection,
  type TlsOptions,
} from "@nats-io/nats-core";
import { connect as natsConnect } from "@nats-io/transport-node";

export type ConnectOptions = {
  /** One URL, a comma-separated list, or a list. Default nats://127.0.0.1:4222. */
  servers?: string | string[];
  user?: string;
  pass?: string;
  token?: string;
  /** A .creds file: its path or its contents. */
  creds?: string;
  /** An nkey seed (`SU...`) or the path of a file holding one. */
  nkeySeed?: string;
  /** Each one a file path or PEM text. */
  tls?: { ca?: string; cert?: string; key?: string };
  /**
   * Reply subjects start with this instead of `_INBOX`. Under deploy/nats/auth.conf every
   * client but the registry must use its own (`_INBOX_<name>`), or its requests get no reply.
   */
  inboxPrefix?: string;
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** Connect timeout in ms (nats.js default 20 s). */
  timeoutMs?: number;
  /** Overrides of the daemon defaults (e.g. maxReconnectAttempts for a one-shot script). */
  overrides?: Partial<ConnectionOptions>;
};

export const DEFAULT_NATS_URL = "nats://127.0.0.1:4222";

const DAEMON_DEFAULTS = {
  maxReconnectAttempts: -1,
  pingInterval: 20_000,
  reconnectTimeWait: 1_000,
  noAsyncTraces: true,
} as const satisfies Partial<ConnectionOptions>;

const isPem = (v: string) => v.includes("-----BEGIN");
// Credentials files hold a JWT block; anything without one is taken for a path.
const isCredsText = (v: string) => v.includes("-----BEGIN NATS USER JWT-----");
const NKEY_SEED_RE = /^S[A-Z][A-Z2-7]{50,}$/;

function splitServers(servers: string | string[] | undefined): string[] {
  const list = Array.isArray(servers) ? servers : (servers ?? DEFAULT_NATS_URL).split(",");
  const out = list.map((s) => s.trim()).filter((s) => s !== "");
  return out.length > 0 ? out : [DEFAULT_NATS_URL];
}

function tlsOptions(tls: NonNullable<ConnectOptions["tls"]>): TlsOptions {
  const out: TlsOptions = {};
  if (tls.ca) Object.assign(out, isPem(tls.ca) ? { ca: tls.ca } : { caFile: tls.ca });
  if (tls.cert) Object.assign(out, isPem(tls.cert) ? { cert: tls.cert } : { certFile: tls.cert });
  if (tls.key) Object.assign(out, isPem(tls.key) ? { key: tls.key } : { keyFile: tls.key });
  return out;
}

function authenticators(o: ConnectOptions): Authenticator[] {
  const auth: Authenticator[] = [];
  const enc = new TextEncoder();
  if (o.creds) {
    const text = isCredsText(o.creds) ? o.creds : readFileSync(o.creds, "utf8");
    auth.push(credsAuthenticator(enc.encode(text)));
  }
  if (o.nkeySeed) {
    const seed = NKEY_SEED_RE.test(o.nkeySeed.trim()) ? o.nkeySeed.trim() : readFileSync(o.nkeySeed, "utf8").trim();
    auth.push(nkeyAuthenticator(enc.encode(seed)));
  }
  if (o.user !== undefined) auth.push(usernamePasswordAuthenticator(o.user, o.pass));
  if (o.token) auth.push(tokenAuthenticator(o.token));
  return auth;
}

/** nats.js ConnectionOptions with daemon-friendly defaults and the chosen authentication. */
export function connectionOptions(o: ConnectOptions = {}): ConnectionOptions {
  const opts: ConnectionOptions = { ...DAEMON_DEFAULTS, servers: splitServers(o.servers) };
  const auth = authenticators(o);
  if (auth.length > 0) opts.authenticator = auth;
  if (o.tls && (o.tls.ca || o.tls.cert || o.tls.key)) opts.tls = tlsOptions(o.tls);
  if (o.inboxPrefix) opts.inboxPrefix = o.inboxPrefix;
  if (o.name) opts.name = o.name;
  if (o.timeoutMs !== undefined) opts.timeout = o.timeoutMs;
  return { ...opts, ...o.overrides };
}

/**
 * Connection settings from the environment variables the service and the CLI read too:
 * NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TOKEN, NATS_CREDS, NATS_NKEY_SEED_FILE,
 * NATS_TLS_CA, NATS_TLS_CERT, NATS_TLS_KEY and NATS_INBOX_PREFIX. Empty values count as unset;
 * the defined values of `extra` (a name, a timeout, overrides) win over the environment.
 */
export function connectOptionsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env, extra: ConnectOptions = {}): ConnectOptions {
  const get = (name: string) => (env[name] === "" ? undefined : env[name]);
  const tls = { ca: get("NATS_TLS_CA"), cert: get("NATS_TLS_CERT"), key: get("NATS_TLS_KEY") };
  const fromEnv: ConnectOptions = {
    servers: get("NATS_URL"),
    user: get("NATS_USER"),
    pass: get("NATS_PASSWORD"),
    token: get("NATS_TOKEN"),
    creds: get("NATS_CREDS"),
    nkeySeed: get("NATS_NKEY_SEED_FILE"),
    inboxPrefix: get("NATS_INBOX_PREFIX"),
    ...(tls.ca || tls.cert || tls.key ? { tls } : {}),
  };
  const defined = (o: ConnectOptions) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as ConnectOptions;
  return { ...defined(fromEnv), ...defined(extra) };
}

/** Connects with {@link connectionOptions}. */
export function connect(o: ConnectOptions = {}): Promise<NatsConnection> {
  return natsConnect(connectionOptions(o));
}
