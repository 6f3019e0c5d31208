/**
 * The service's own NATS connection: the SDK's connection options (daemon defaults: reconnect
 * forever, 20 s pings), the embedded-server fallback of the quick start, and the server
 * version check of the deployment advice (NATS-NOTES.md: clustered JetStream below 2.10.23
 * could forget streams after kill -9; 2.11+ is recommended).
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { AuthorizationError, type NatsConnection } from "@nats-io/nats-core";
import { connect as natsConnect } from "@nats-io/transport-node";
import semver from "semver";
import { connectionOptions, DEFAULT_NATS_URL, type ConnectOptions } from "../../client/connection.js";
import type { Config } from "../../config/service.js";
import type { Logger } from "../../kit/logger.js";
import { redactUrls } from "../../kit/log-redaction.js";
import { isLoopbackAuthority } from "../../kit/hosts.js";
import { findNatsServerBinary, natsServerBinaryName, startNatsServer, type NatsServerHandle } from "./nats-server-process.js";

export const MIN_CLUSTER_VERSION = "2.10.23";
export const RECOMMENDED_VERSION = "2.11.0";
/** Consumers with several filter subjects, and `sync_interval`, arrived in 2.10. */
export const MANY_FILTERS_VERSION = "2.10.0";

/**
 * The name a replica's connection gives nats-server (CONNECT `name`, shown by `nats server
 * report connections` and the monitoring endpoint's /connz): the API connection is
 * `agent-registry:<replica>`, the others add their role (docs/operations.md).
 */
export function connectionName(replica: string, role: "api" | "lease" | "loader"): string {
  return role === "api" ? `agent-registry:${replica}` : `agent-registry:${replica}:${role}`;
}

export function registryConnectionOptions(config: Config, servers: string, name: string) {
  return connectionOptions(registryConnectSettings(config, servers, name));
}

/** The settings behind registryConnectionOptions, as plain data: a worker thread builds its own connection from them. */
export function registryConnectSettings(config: Config, servers: string, name: string): ConnectOptions {
  return {
    servers,
    user: config.natsUser,
    pass: config.natsPassword,
    token: config.natsToken,
    creds: config.natsCreds,
    nkeySeed: config.natsNkeySeedFile,
    tls: { ca: config.natsTlsCa, cert: config.natsTlsCert, key: config.natsTlsKey },
    name,
    timeoutMs: config.requestTimeoutMs,
  };
}

/**
 * Decides which server to use. With `embedded: auto`, a local nats-server with JetStream is
 * started in the data directory only when the configured URL is the default one and nothing
 * answers there, so a fresh machine runs with one command and a configured URL is never
 * silently replaced.
 */
export async function resolveServer(config: Config, log: Logger): Promise<{ servers: string; embedded: NatsServerHandle | null }> {
  const wantEmbedded =
    config.embedded === "always" || (config.embedded === "auto" && config.natsUrl === DEFAULT_NATS_URL && !(await reachable(config.natsUrl)));
  if (!wantEmbedded) return { servers: config.natsUrl, embedded: null };
  const binary = findNatsServerBinary();
  // Stopping beats waiting: on a fresh machine nothing else will ever answer at the default URL,
  // and a registry retrying forever looks like one that works. REGISTRY_EMBEDDED=never waits.
  if (!binary) throw new Error(noNatsServerMessage(config.natsUrl, natsServerBinaryName(), config.embedded === "auto"));
  const storeDir = resolve(config.dataDir, "nats");
  mkdirSync(storeDir, { recursive: true });
  const port = Number(new URL(config.natsUrl).port || 4222);
  const embedded = await startNatsServer({ binary, port, storeDir, jetstream: true });
  log.info({ url: embedded.url, storeDir, binary }, "no NATS server was reachable: started an embedded nats-server with JetStream");
  return { servers: embedded.url, embedded };
}

/** The one line `serve` stops with when it should start a nats-server but has none. */
export function noNatsServerMessage(url: string, binary: string, probed: boolean): string {
  const which = binary === "nats-server" ? "no nats-server binary is on PATH" : `NATS_SERVER_BIN=${binary} is not an executable file`;
  const why = probed ? `no NATS server answers at ${redactUrls(url)} and ${which} to start one` : `REGISTRY_EMBEDDED=always, but ${which}`;
  return (
    `${why}: install nats-server (Debian: apt-get install nats-server; or ` +
    "go install github.com/nats-io/nats-server/v2@latest), or set NATS_URL to a running server (REGISTRY_EMBEDDED=never waits for it)"
  );
}

async function reachable(url: string): Promise<boolean> {
  try {
    const nc = await natsConnect({ servers: url, timeout: 1500, maxReconnectAttempts: 0, reconnect: false });
    await nc.close();
    return true;
  } catch (e) {
    // A server that refuses our credentials is still a server: do not start another beside it.
    return e instanceof AuthorizationError;
  }
}

/**
 * Whether the registry sends anything that authenticates it: a user, token, creds, nkey, a TLS
 * client certificate, or credentials in a server URL (`nats://user:pass@host`).
 */
export function hasCredentials(config: Config): boolean {
  if (config.natsUser || config.natsToken || config.natsCreds || config.natsNkeySeedFile || config.natsTlsCert) return true;
  return config.natsUrl.split(",").some((u) => {
    try {
      return new URL(u.trim()).username !== "";
    } catch {
      return false;
    }
  });
}

/**
 * The warning `serve` gives when it runs without credentials against a server another
 * machine can reach (issue 14): with no authentication there, any client can register as any
 * agent, read every reply and write the bucket directly. A loopback server (the quick start,
 * the embedded one) is left alone.
 */
export function noAuthWarning(server: string, credentials: boolean, authRequired: boolean | undefined): string | null {
  if (credentials || server === "" || isLoopbackAuthority(server)) return null;
  const what = authRequired ? "" : " (and the server does not ask for any)";
  return `connected to NATS at ${server} without credentials${what}: any client that reaches this server can register as any agent, read replies and write the registry's bucket; give each role its own user and permissions (docs/security.md)`;
}

export type ServerReport = { version: string; clustered: boolean; warnings: string[] };

/** Reads the server version from the connection and says what the deployment advice says. */
export function checkServer(nc: NatsConnection): ServerReport {
  const info = nc.info;
  const version = info?.version ?? "unknown";
  const clustered = Boolean(info?.cluster);
  const warnings: string[] = [];
  const v = semver.coerce(version)?.version;
  if (v && clustered && semver.lt(v, MIN_CLUSTER_VERSION)) {
    warnings.push(
      `nats-server ${version} in a cluster: versions before ${MIN_CLUSTER_VERSION} could lose JetStream streams after kill -9 (nats-server#6888); upgrade to ${RECOMMENDED_VERSION} or newer`,
    );
  } else if (v && semver.lt(v, MANY_FILTERS_VERSION)) {
    // What this server lacks changes how two things work, never whether they work.
    warnings.push(
      `nats-server ${version}: fine for a single node; ${RECOMMENDED_VERSION}+ is recommended for production (per-key TTL, delete markers, fsync fixes). ` +
        `Before ${MANY_FILTERS_VERSION}: event feeds filtered by several types read every event and filter in the registry, and sync_interval (deploy/nats/cluster) is refused`,
    );
  } else if (v && semver.lt(v, RECOMMENDED_VERSION)) {
    warnings.push(`nats-server ${version}: fine for a single node; ${RECOMMENDED_VERSION}+ is recommended for production (per-key TTL, delete markers, fsync fixes)`);
  }
  return { version, clustered, warnings };
}
