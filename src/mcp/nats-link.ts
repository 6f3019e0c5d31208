/**
 * The MCP front's way to the registry: a NATS connection that may not be there yet. An MCP
 * client starts `agent-registry mcp` and talks to it at once; if NATS is down at that moment,
 * exiting left the client with nothing but "Connection closed". So the front serves from the
 * start and the link connects in the background, trying again every `reconnectTimeWait` (the
 * client's reconnect setting, with its jitter) until a server answers; after that nats.js
 * reconnects by itself. Meanwhile every tool that needs the registry is refused at once with
 * `unavailable`, naming the URL and that the front is still connecting, and `registry_health`
 * reports the link's state. Our own loop rather than nats.js's `waitOnFirstConnect`, which can
 * be neither cancelled (a stop while connecting) nor asked why it failed.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { errors, type ConnectionOptions, type NatsConnection, type Status } from "@nats-io/nats-core";
import { connect as natsConnect } from "@nats-io/transport-node";
import { RegistryClient, type RegistryClientOptions } from "../client/registry-client.js";
import { ErrorCode } from "../protocol/errors.js";
import { subjects, type Subjects } from "../protocol/subjects.js";
import { redactUrls } from "../kit/log-redaction.js";
import type { Logger } from "../kit/logger.js";
import { ToolError } from "./tool-error.js";

/** What `registry_health` says of the connection. */
export type LinkStatus = {
  readonly connected: boolean;
  /** The servers as configured (or the one connected to), credentials redacted. */
  readonly url: string;
  /** When the link took its current state: connected, or down (since the start when it never connected). */
  readonly since: Date;
  /** Why the last connection attempt failed, or how the connection was lost; null while connected. */
  readonly lastError: string | null;
};

/** What the tools and the capability watch need of the connection (a port, so tests can hand in their own). */
export interface RegistryLink {
  readonly tenant: string | undefined;
  readonly subjects: Subjects;
  status(): LinkStatus;
  /**
   * The SDK client while connected. While the first attempt is under way it waits for that
   * attempt (bounded by the connect timeout), so a call made just after start is not refused
   * for nothing; otherwise a ToolError `unavailable` at once.
   */
  client(): Promise<RegistryClient>;
  /** Runs `use` on the connection now if there is one, and on each new one; the function it returns undoes it. */
  onConnection(use: (nc: NatsConnection) => () => void): () => void;
}

export type BackgroundLinkOptions = {
  /** The nats.js options (connectionOptions() of the client); `reconnectTimeWait` and `reconnectJitter` pace the retries. */
  connection: ConnectionOptions;
  client: RegistryClientOptions;
  log: Logger;
  /** nats.js `connect` unless a test gives another. */
  connect?: (options: ConnectionOptions) => Promise<NatsConnection>;
};

type Connected = { readonly nc: NatsConnection; readonly client: RegistryClient };
type User = { readonly use: (nc: NatsConnection) => () => void; undo?: (() => void) | undefined };

const NATS_DEFAULT_RECONNECT_WAIT_MS = 2000;
const NATS_DEFAULT_JITTER_MS = 100;

/** Why an attempt failed, in a line a person reads (no stack). */
function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof errors.AuthorizationError || err instanceof errors.UserAuthenticationExpiredError) {
    return `the server refused the credentials: ${message}`;
  }
  return message;
}

export class NatsLink implements RegistryLink {
  readonly tenant: string | undefined;
  readonly subjects: Subjects;
  #status: LinkStatus;
  #current: Connected | undefined;
  #stopped = false;
  readonly #users = new Set<User>();
  readonly #stopSleep = new AbortController();
  /** Resolves once the first attempt has connected or failed. */
  readonly #firstSettled: Promise<void>;
  #settleFirst: () => void = () => undefined;
  #everFailed = false;
  readonly #clientOptions: RegistryClientOptions;

  private constructor(
    url: string,
    client: RegistryClientOptions,
    private readonly log: Logger,
    /** Absent for a connection someone else opened and closes (adopt). */
    private readonly background: Required<Pick<BackgroundLinkOptions, "connection" | "connect">> | undefined,
  ) {
    this.tenant = client.tenant;
    this.subjects = subjects(client.prefix ?? "registry");
    this.#status = { connected: false, url, since: new Date(), lastError: null };
    this.#firstSettled = new Promise((resolve) => (this.#settleFirst = resolve));
    this.#clientOptions = client;
  }

  /** A link over a connection that is already open and owned by someone else (`serve`'s): it reports the connection's state and never closes it. */
  static adopt(nc: NatsConnection, client: RegistryClient, log: Logger): NatsLink {
    const server = nc.getServer();
    const url = redactUrls(server.includes("://") ? server : `nats://${server}`);
    const link = new NatsLink(url, { prefix: client.subjects.prefix, tenant: client.tenant }, log, undefined);
    link.#use({ nc, client });
    return link;
  }

  /** Starts connecting and returns at once; the attempts go on until one succeeds or close() is called. */
  static connectInBackground(options: BackgroundLinkOptions): NatsLink {
    const url = redactUrls([options.connection.servers ?? []].flat().join(","));
    const link = new NatsLink(url, options.client, options.log, { connection: options.connection, connect: options.connect ?? natsConnect });
    link.#connectUntilUp();
    return link;
  }

  /** The pause between two attempts, as nats.js pauses between reconnects. */
  get retryMs(): number {
    return this.background?.connection.reconnectTimeWait ?? NATS_DEFAULT_RECONNECT_WAIT_MS;
  }

  status(): LinkStatus {
    return this.#status;
  }

  async client(): Promise<RegistryClient> {
    if (!this.#current && !this.#everFailed) await this.#firstSettled;
    const current = this.#current;
    if (current && this.#status.connected) return current.client;
    throw this.#unavailable();
  }

  onConnection(use: (nc: NatsConnection) => () => void): () => void {
    const user: User = { use };
    this.#users.add(user);
    if (this.#current) this.#start(user, this.#current.nc);
    return () => {
      this.#users.delete(user);
      this.#stop(user);
    };
  }

  /** Stops trying, undoes what runs on the connection, and closes the connection when it is this link's own. */
  async close(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopSleep.abort();
    this.#settleFirst();
    for (const user of this.#users) this.#stop(user);
    this.#users.clear();
    const current = this.#current;
    this.#current = undefined;
    if (current && this.background) await current.nc.close().catch(() => undefined);
  }

  #unavailable(): ToolError {
    if (this.#stopped) return new ToolError(ErrorCode.Unavailable, "this MCP server is stopping");
    const { url, since, lastError } = this.#status;
    return new ToolError(
      ErrorCode.Unavailable,
      `no connection to NATS at ${url} since ${since.toISOString()}${lastError ? ` (${lastError})` : ""}; this MCP server is still connecting, try again later`,
    );
  }

  #connectUntilUp(): void {
    this.#attempts()
      .catch((err: unknown) => this.log.error({ err }, "the NATS connection loop failed; the MCP server cannot reach the registry"))
      .finally(() => this.#settleFirst());
  }

  async #attempts(): Promise<void> {
    const { connection, connect } = this.background!;
    while (!this.#stopped) {
      let nc: NatsConnection;
      try {
        nc = await connect({ ...connection, waitOnFirstConnect: false });
      } catch (err) {
        if (this.#stopped) return;
        this.#failed(describeFailure(err));
        this.#settleFirst();
        const jitter = Math.random() * (connection.reconnectJitter ?? NATS_DEFAULT_JITTER_MS);
        // Unreferenced: a pause between attempts never keeps a stopping process alive.
        await sleep(this.retryMs + jitter, undefined, { signal: this.#stopSleep.signal, ref: false }).catch(() => undefined);
        continue;
      }
      if (this.#stopped) {
        await nc.close().catch(() => undefined);
        return;
      }
      if (this.#everFailed) this.log.info({ nats_url: this.#status.url }, `connected to NATS at ${this.#status.url}; the MCP tools reach the registry`);
      this.#use({ nc, client: new RegistryClient(nc, this.#clientOptions) });
      return;
    }
  }

  #failed(reason: string): void {
    const before = this.#status;
    const fields = { nats_url: before.url, reason, retry_ms: this.retryMs };
    if (!this.#everFailed) {
      this.log.warn(fields, `NATS at ${before.url} unreachable (${reason}); serving MCP and retrying every ${this.retryMs / 1000}s`);
    } else if (reason !== before.lastError) {
      this.log.info(fields, `NATS at ${before.url} still unreachable (${reason}); retrying`);
    }
    this.#everFailed = true;
    this.#status = { ...before, connected: false, since: before.connected ? new Date() : before.since, lastError: reason };
  }

  #use(current: Connected): void {
    this.#current = current;
    this.#status = { ...this.#status, connected: true, since: new Date(), lastError: null };
    this.#settleFirst();
    for (const user of this.#users) this.#start(user, current.nc);
    this.#follow(current.nc).catch((err: unknown) => this.log.debug({ err }, "stopped following the NATS connection's status"));
    current.nc
      .closed()
      .then((err) => this.#lost(current.nc, err))
      .catch((err: unknown) => this.log.warn({ err }, "could not handle the end of the NATS connection"));
  }

  /** nats.js reconnects by itself; the link only keeps track, for registry_health and for refusing calls at once. */
  async #follow(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (this.#current?.nc !== nc) return;
      this.#onStatus(s);
    }
  }

  #onStatus(s: Status): void {
    const now = new Date();
    switch (s.type) {
      case "disconnect":
        this.#status = { ...this.#status, connected: false, since: now, lastError: `lost the connection to ${redactUrls(s.server)}` };
        this.log.warn({ nats_url: this.#status.url, server: redactUrls(s.server) }, "lost the NATS connection; reconnecting (MCP tools answer unavailable meanwhile)");
        break;
      case "reconnect":
        this.#status = { ...this.#status, connected: true, since: now, lastError: null };
        this.log.info({ nats_url: this.#status.url, server: redactUrls(s.server) }, "reconnected to NATS");
        break;
      case "error":
        if (!this.#status.connected) this.#status = { ...this.#status, lastError: describeFailure(s.error) };
        break;
      default:
        break;
    }
  }

  /** The connection ended without close() (nats.js gave up, say on credentials refused twice): an own link starts over. */
  #lost(nc: NatsConnection, err: void | Error): void {
    if (this.#stopped || this.#current?.nc !== nc) return;
    this.#current = undefined;
    for (const user of this.#users) this.#stop(user);
    const reason = `the connection closed${err ? `: ${describeFailure(err)}` : ""}`;
    this.#status = { ...this.#status, connected: false, since: new Date(), lastError: reason };
    if (!this.background) return;
    this.log.warn({ nats_url: this.#status.url, reason }, `${reason}; connecting again`);
    this.#connectUntilUp();
  }

  #start(user: User, nc: NatsConnection): void {
    try {
      user.undo = user.use(nc);
    } catch (err) {
      this.log.warn({ err }, "could not start what runs on the NATS connection");
    }
  }

  #stop(user: User): void {
    const undo = user.undo;
    user.undo = undefined;
    try {
      undo?.();
    } catch (err) {
      this.log.warn({ err }, "could not stop what runs on the NATS connection");
    }
  }
}
