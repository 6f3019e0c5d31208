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
import { connectionOptions, DEFAULT_NATS_URL } from "../../client/connection.js";
import type { Config } from "../../config.js";
import type { Logger } from "../../service/logger.js";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "./nats-server-process.js";

export const MIN_CLUSTER_VERSION = "2.10.23";
export const RECOMMENDED_VERSION = "2.11.0";

export function registryConnectionOptions(config: Config, servers: string, name: string) {
  return connectionOptions({
    servers,
    user: config.natsUser,
    pass: config.natsPassword,
    token: config.natsToken,
    creds: config.natsCreds,
    nkeySeed: config.natsNkeySeedFile,
    tls: { ca: config.natsTlsCa, cert: config.natsTlsCert, key: config.natsTlsKey },
    name,
    timeoutMs: config.requestTimeoutMs,
    // A replica started before its NATS cluster (compose, k8s) keeps trying instead of exiting;
    // /healthz answers meanwhile and /readyz says why it is not ready.
    overrides: { waitOnFirstConnect: true },
  });
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
  if (!binary) {
    if (config.embedded === "always") throw new Error("REGISTRY_EMBEDDED=always but no nats-server binary is on PATH");
    log.warn({ url: config.natsUrl }, "no NATS server answers and no nats-server binary is on PATH; will keep trying to connect");
    return { servers: config.natsUrl, embedded: null };
  }
  const storeDir = resolve(config.dataDir, "nats");
  mkdirSync(storeDir, { recursive: true });
  const port = Number(new URL(config.natsUrl).port || 4222);
  const embedded = await startNatsServer({ binary, port, storeDir, jetstream: true });
  log.info({ url: embedded.url, storeDir, binary }, "no NATS server was reachable: started an embedded nats-server with JetStream");
  return { servers: embedded.url, embedded };
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
  } else if (v && semver.lt(v, RECOMMENDED_VERSION)) {
    warnings.push(`nats-server ${version}: fine for a single node; ${RECOMMENDED_VERSION}+ is recommended for production (per-key TTL, delete markers, fsync fixes)`);
  }
  return { version, clustered, warnings };
}
