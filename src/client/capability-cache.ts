/**
 * A local copy of the capability projection (the `capabilities` query) for coordinators that
 * plan often: answers come from memory, stay fresh through `capability.changed` events, and
 * survive a registry outage (the last state is kept and flagged stale with its age).
 */
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { RegistryClient, type RegistryClientOptions } from "./registry-client.js";
import type { AgentStatus, CapabilityEntry } from "./types.js";

export type CapabilityCacheOptions = RegistryClientOptions & {
  /** Full resync period, a safety net for lost events. Default 30 s. */
  resyncMs?: number;
  /** Status filter passed to the `capabilities` query. */
  status?: AgentStatus[];
  /**
   * Called after the first load and after every refresh whose projection differs from the
   * last one. (The store revision moves on for other reasons too, lease renewals among them,
   * so a new revision alone does not mean the capabilities changed.)
   */
  onChange?: (capabilities: readonly CapabilityEntry[], revision: number) => void;
  /** Called when a refresh fails (the cache keeps its last state). */
  onError?: (error: unknown) => void;
  /** Injected clock for tests. */
  now?: () => number;
};

/** What the cache answers with: the value, and how much to trust it. */
export type CachedAnswer<T> = {
  value: T;
  revision: number;
  /** True when the last refresh failed or none succeeded yet. */
  stale: boolean;
  /** Milliseconds since the last successful refresh (Infinity before the first). */
  ageMs: number;
};

export class CapabilityCache {
  readonly #client: RegistryClient;
  readonly #nc: NatsConnection;
  readonly #opts: CapabilityCacheOptions;
  readonly #now: () => number;
  #byName = new Map<string, CapabilityEntry>();
  #list: readonly CapabilityEntry[] = [];
  #revision = 0;
  #text: string | undefined;
  #loadedAt = Number.NEGATIVE_INFINITY;
  #lastFailed = true;
  #sub: Subscription | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #status: { stop?: () => void } | undefined;
  // Coalescing: at most one refresh runs; events arriving meanwhile ask for one more after it.
  #inFlight: Promise<void> | undefined;
  #again = false;
  #wantRevision = 0;
  #closed = false;

  constructor(nc: NatsConnection, options: CapabilityCacheOptions = {}) {
    this.#nc = nc;
    this.#opts = options;
    this.#now = options.now ?? Date.now;
    this.#client = new RegistryClient(nc, options);
  }

  /**
   * Subscribes to change events, starts the periodic resync (and a refresh after every
   * reconnect, since events sent meanwhile are lost), and loads the projection once.
   * A failed first load does not throw: the cache starts empty and stale, and keeps trying.
   */
  async start(): Promise<this> {
    const subject = `${this.#client.subjects.prefix}.capability.changed.>`;
    this.#sub = this.#nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) return;
        this.#wantRevision = Math.max(this.#wantRevision, eventRevision(msg.data));
        void this.refresh();
      },
    });
    // Events published while the connection was down are lost to a core subscription.
    const status = this.#nc.status();
    this.#status = status as { stop?: () => void };
    void (async () => {
      for await (const s of status) if (s.type === "reconnect") void this.refresh();
    })().catch(() => undefined);
    const every = this.#opts.resyncMs ?? 30_000;
    this.#timer = setInterval(() => void this.refresh(), every);
    this.#timer.unref?.();
    await this.refresh();
    return this;
  }

  /** Refreshes now, or once more after the refresh already running. Never rejects. */
  refresh(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    this.#inFlight = this.#run().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #run(): Promise<void> {
    do {
      this.#again = false;
      // Passing the newest revision seen means a lagging replica cannot move the cache back in time.
      const minRevision = Math.max(this.#revision, this.#wantRevision);
      try {
        const reply = await this.#client.capabilitiesAll(
          this.#opts.status ? { status: this.#opts.status } : {},
          minRevision > 0 ? { minRevision } : {},
        );
        const text = JSON.stringify(reply.capabilities);
        const changed = text !== this.#text;
        this.#text = text;
        this.#list = reply.capabilities;
        this.#byName = new Map(reply.capabilities.map((c) => [c.name, c]));
        this.#revision = reply.revision;
        this.#loadedAt = this.#now();
        this.#lastFailed = false;
        if (changed) this.#opts.onChange?.(this.#list, this.#revision);
      } catch (e) {
        this.#lastFailed = true;
        this.#opts.onError?.(e);
        return;
      }
    } while (this.#again && !this.#closed);
  }

  #answer<T>(value: T): CachedAnswer<T> {
    return { value, revision: this.#revision, stale: this.#lastFailed, ageMs: this.#now() - this.#loadedAt };
  }

  /** One capability from memory (`value` undefined when no ready provider offers it). */
  lookup(capability: string): CachedAnswer<CapabilityEntry | undefined> {
    return this.#answer(this.#byName.get(capability));
  }

  /** The whole projection from memory. */
  snapshot(): CachedAnswer<readonly CapabilityEntry[]> {
    return this.#answer(this.#list);
  }

  get revision(): number {
    return this.#revision;
  }

  /** Stops the subscription and the timer; answers stay available from the last state. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#sub?.unsubscribe();
    this.#status?.stop?.();
    await this.#inFlight;
  }
}

function eventRevision(data: Uint8Array): number {
  try {
    const ev = JSON.parse(new TextDecoder().decode(data)) as { data?: { revision?: unknown } };
    const rev = ev.data?.revision;
    return typeof rev === "number" && Number.isSafeInteger(rev) ? rev : 0;
  } catch {
    return 0;
  }
}

/** Creates and starts a {@link CapabilityCache}. */
export function createCapabilityCache(nc: NatsConnection, options?: CapabilityCacheOptions): Promise<CapabilityCache> {
  return new CapabilityCache(nc, options).start();
}
