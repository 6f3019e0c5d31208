/**
 * Replays and follows the registry's stored events (PROTOCOL.md section 5) with a JetStream
 * ordered consumer: no durable state on the server, gap-free and in store order, resumable
 * from a stream sequence. The consumer is deleted when the reader is done with it, and one
 * whose reader died without a word is removed by the server after CONSUMER_INACTIVE_MS.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import {
  JetStreamApiError,
  JetStreamApiCodes,
  jetstream,
  type ConsumeOptions,
  type ConsumerMessages,
  type JetStreamClient,
  type OrderedConsumerOptions,
} from "@nats-io/jetstream";
import { EVENT_TYPES, EventType, STORED_EVENT_TYPES } from "../protocol/events.js";
import { subjects } from "../protocol/subjects.js";
import { permissionDenied } from "./errors.js";
import type { RegistryEvent } from "./types.js";

export type WatchEventsOptions = {
  /** Where to start: a Date, a duration back from now (`90s`, `15m`, `1h`, `7d`), an ISO time,
   * or a stream sequence number. Absent: only events from now on. */
  since?: Date | string | number;
  /** Event types, full (`registry.agent.registered`) or short (`agent.registered`). */
  types?: string[];
  /** Only the agent events of this agent_type (capability events have no agent_type subject). */
  agentType?: string;
  stream?: string;
  prefix?: string;
  /** JetStream API timeout in ms. Default 5000. */
  timeoutMs?: number;
  /** Aborting it ends the loop, even while it waits for the next event, and deletes the consumer. */
  signal?: AbortSignal;
  /**
   * How long the server keeps the consumer once nobody reads it (the process died before it
   * could delete it). Default CONSUMER_INACTIVE_MS.
   */
  inactiveThresholdMs?: number;
};

export type WatchedEvent = { seq: number; event: RegistryEvent };

const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `90s`, `15m`, `1h`, `7d`, `250ms` into milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_RE.exec(text.trim());
  return m ? Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? 0) : undefined;
}

/** The deliver policy for `since`; throws on text that is neither a duration nor a time. */
export function startPolicy(since: WatchEventsOptions["since"], now = Date.now()): Partial<OrderedConsumerOptions> {
  if (since === undefined) return { deliver_policy: "new" };
  if (typeof since === "number") {
    if (!Number.isSafeInteger(since) || since < 1) throw new Error(`since: a stream sequence must be a positive integer, got ${since}`);
    return { deliver_policy: "by_start_sequence", opt_start_seq: since };
  }
  let at: Date;
  if (since instanceof Date) at = since;
  else if (/^\d+$/.test(since.trim())) return startPolicy(Number(since.trim()), now);
  else {
    const ms = parseDuration(since);
    at = ms !== undefined ? new Date(now - ms) : new Date(since);
  }
  if (Number.isNaN(at.getTime())) throw new Error(`since: expected a duration like 1h, a time or a sequence, got "${String(since)}"`);
  return { deliver_policy: "by_start_time", opt_start_time: at.toISOString() };
}

const STORED_TYPES = STORED_EVENT_TYPES;

/**
 * How long the server keeps an events consumer nobody reads (the inactive threshold); nats.js
 * sets 5 minutes for ordered consumers. A reader that ends deletes its consumer at once: this
 * is for one that could not (killed, or cut off from NATS). Pending pull requests count as
 * reading, so an idle watch keeps its consumer however long no event comes.
 */
export const CONSUMER_INACTIVE_MS = 30_000;

/** An ordered consumer being read, and how to be done with it. */
export type EventConsumer = {
  messages: ConsumerMessages;
  /** Stops reading and deletes the consumer on the server; never rejects, the same promise each call. */
  close(): Promise<void>;
};

/** Creates an ordered consumer on `stream` and starts reading it; a consumer that cannot be read is deleted before the error is thrown. */
export async function openEventConsumer(
  js: JetStreamClient,
  stream: string,
  options: Partial<OrderedConsumerOptions>,
  consume?: ConsumeOptions,
): Promise<EventConsumer> {
  const consumer = await js.consumers.get(stream, { inactive_threshold: CONSUMER_INACTIVE_MS, ...options });
  let messages: ConsumerMessages;
  try {
    messages = await consumer.consume(consume);
  } catch (e) {
    await consumer.delete().catch(() => undefined);
    throw e;
  }
  let closed: Promise<void> | undefined;
  return {
    messages,
    close: () =>
      (closed ??= (async () => {
        messages.stop();
        // Fails only when NATS cannot be reached: the inactive threshold then removes it.
        await consumer.delete().catch(() => undefined);
      })()),
  };
}

/** Full event type names of stored events from what a user typed; throws on unknown ones. */
export function resolveEventTypes(types: readonly string[]): EventType[] {
  return types.map((t) => {
    const full = t.startsWith("registry.") ? t : `registry.${t}`;
    const found = EVENT_TYPES.find((e) => e === full);
    if (!found) throw new Error(`unknown event type "${t}"; known: ${STORED_TYPES.join(", ")}`);
    // Heartbeats are core NATS only (PROTOCOL.md section 5): a stream filter on them would wait forever.
    if (found === EventType.AgentHeartbeat) throw new Error(`${t} events are not stored; subscribe to <prefix>.agent.heartbeat.> instead`);
    return found;
  });
}

/** Stream subjects to filter on, or undefined for the whole stream. */
export function filterSubjects(opts: Pick<WatchEventsOptions, "types" | "agentType" | "prefix">): string[] | undefined {
  const s = subjects(opts.prefix ?? "registry");
  let types = opts.types && opts.types.length > 0 ? resolveEventTypes(opts.types) : undefined;
  if (opts.agentType !== undefined) {
    types = (types ?? STORED_TYPES).filter((t) => t.startsWith("registry.agent."));
  }
  if (types === undefined) return undefined;
  return [...new Set(types)].map((t) => s.event(t, opts.agentType ?? ">"));
}

/** Matches a NATS subject against a filter with `*` and `>` wildcards. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const t = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === ">") return t.length > i;
    if (i >= t.length || (f[i] !== "*" && f[i] !== t[i])) return false;
  }
  return f.length === t.length;
}

/** Servers before 2.10 accept a single filter subject only. */
export function supportsManyFilters(nc: NatsConnection): boolean {
  const [major = 0, minor = 0] = (nc.info?.version ?? "0.0").split(".").map((n) => Number.parseInt(n, 10));
  return major > 2 || (major === 2 && minor >= 10);
}

// The two ways a watch usually fails to start, in words an operator can act on.
function watchFailure(e: unknown, stream: string): unknown {
  const denied = permissionDenied(e);
  if (denied) return denied;
  if (e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound) {
    return new Error(`events stream ${stream} not found: is the registry running on this NATS, and is its events stream named ${stream}?`, { cause: e });
  }
  return e;
}

/**
 * Events from the stream, oldest first: the replay from `since`, then live ones as they are
 * stored. Breaking out of the loop, an error, or aborting `signal` deletes the consumer.
 */
export async function* watchEvents(nc: NatsConnection, options: WatchEventsOptions = {}): AsyncGenerator<WatchedEvent, void, undefined> {
  const filters = filterSubjects(options);
  const consumerOpts: Partial<OrderedConsumerOptions> = { ...startPolicy(options.since) };
  if (filters?.length === 1) consumerOpts.filter_subjects = filters[0];
  else if (filters && supportsManyFilters(nc)) consumerOpts.filter_subjects = filters;
  if (options.inactiveThresholdMs !== undefined) consumerOpts.inactive_threshold = options.inactiveThresholdMs;

  const { signal } = options;
  if (signal?.aborted) return;
  const stream = options.stream ?? "REGISTRY_EVENTS";
  const js = jetstream(nc, { timeout: options.timeoutMs ?? 5000 });
  let opened: EventConsumer;
  try {
    opened = await openEventConsumer(js, stream, consumerOpts);
  } catch (e) {
    throw watchFailure(e, stream);
  }
  // Stopping the messages ends the loop below while it waits, which a return() could not do.
  const abort = (): void => opened.messages.stop();
  signal?.addEventListener("abort", abort, { once: true });
  const decoder = new TextDecoder();
  try {
    if (signal?.aborted) return;
    for await (const m of opened.messages) {
      // Also filtered here, for servers that could not take every filter subject.
      if (filters && !filters.some((f) => subjectMatches(f, m.subject))) continue;
      let event: RegistryEvent;
      try {
        event = JSON.parse(decoder.decode(m.data)) as RegistryEvent;
      } catch {
        continue; // not a CloudEvent of ours; the stream may be shared with other publishers
      }
      yield { seq: m.seq, event };
    }
  } finally {
    signal?.removeEventListener("abort", abort);
    await opened.close();
  }
}
