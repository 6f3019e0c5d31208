/**
 * /ui/events: the stored registry events as server-sent events (PROTOCOL.md section 14), one
 * JetStream ordered consumer per open page: `id:` the stream sequence, `event:` the CloudEvent
 * type, `data:` the CloudEvent JSON. `Last-Event-ID` (or ?last_event_id=) resumes after that
 * sequence; ?since= (a duration, a time or a sequence) or ?recent=N (the stream's last N
 * messages) replays; ?agent= and ?types= filter; ?heartbeats=1 adds the core NATS heartbeats,
 * which have no id since they are not stored. The number of streams is bounded, and a client
 * that reads slower than events come is cut off (it reconnects and resumes) rather than
 * buffered for without bound. A stream that ends, whoever ends it, deletes its consumer; one
 * left by a replica that died is removed by the server after CONSUMER_INACTIVE_MS. When the stream cannot be read (NATS down, the stream deleted)
 * the request is answered 503 with a structured error and logged at warn, its path redacted.
 * Every event, stored or heartbeat, goes through the page's visibility first
 * (event-visibility.ts): a tenant's agents' events never reach the page, which cannot show them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, type OrderedConsumerOptions } from "@nats-io/jetstream";
import { filterSubjects, openEventConsumer, startPolicy, subjectMatches, supportsManyFilters, type EventConsumer } from "../../client/events.js";
import { AGENT_TYPE_RE } from "../../protocol/ids.js";
import { redactUrl } from "../../kit/log-redaction.js";
import type { EventVisibility } from "./event-visibility.js";

export type EventFeedOptions = {
  nc: NatsConnection;
  prefix: string;
  stream: string;
  maxClients: number;
  /** Which events, and what of them, the page may see. */
  visibility: EventVisibility;
  /** A comment line this often keeps proxies from closing an idle stream. */
  keepAliveMs?: number;
  /** Bytes written but not yet taken by the client past which it is cut off. */
  maxBufferBytes?: number;
  timeoutMs?: number;
  /** The consumers' inactive threshold (client/events.ts CONSUMER_INACTIVE_MS by default). */
  consumerInactiveMs?: number;
  /** False while the connection is known to be down: requests are refused at once rather than after timeoutMs. */
  connected?: () => boolean;
  log?: { warn(obj: object, msg?: string): void };
};

/** The most ?recent= may ask for: a page shows a few hundred lines. */
export const MAX_RECENT = 1000;
const DEFAULT_KEEPALIVE_MS = 15_000;
const DEFAULT_MAX_BUFFER = 1024 * 1024;

type Start = Partial<OrderedConsumerOptions>;

/** A bad parameter, answered with 400 and its message. */
export class FeedRequestError extends Error {}

/** NATS could not say where the stream stands (timeout, no stream), answered with 503. */
class StreamUnreadable extends Error {}

export class EventFeed {
  readonly #closers = new Set<() => void>();
  #opening = 0;
  /** Set by closeAll: the registry is stopping, and the streams it would open would not last. */
  #stopped = false;
  readonly #o: EventFeedOptions;
  readonly #decoder = new TextDecoder();

  constructor(options: EventFeedOptions) {
    this.#o = options;
  }

  get clients(): number {
    return this.#closers.size;
  }

  /** Ends every open stream (the registry is stopping); clients reconnect elsewhere. */
  closeAll(): void {
    this.#stopped = true;
    for (const close of [...this.#closers]) close();
  }

  async serve(req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
    if (this.#stopped) return refuse(res, 503, "unavailable", "the registry is stopping");
    if (this.#o.connected?.() === false) return this.#unreadable(req, res, new StreamUnreadable("the registry's NATS connection is down"));
    // Places are taken before the first await, so requests arriving together cannot exceed the bound.
    if (this.#closers.size + this.#opening >= this.#o.maxClients) {
      return refuse(res, 503, "unavailable", `${this.#o.maxClients} event streams are open already (REGISTRY_UI_MAX_CLIENTS)`);
    }
    this.#opening++;
    let held = true;
    const release = (): void => {
      if (held) this.#opening--;
      held = false;
    };
    try {
      await this.#open(req, res, query, release);
    } finally {
      release();
    }
  }

  /** Sets up the consumer, then (its place moved from opening to open by `release`) streams until the client or the registry ends it. */
  async #open(req: IncomingMessage, res: ServerResponse, query: URLSearchParams, release: () => void): Promise<void> {
    let agent: string | undefined, filters: string[] | undefined, start: Start;
    try {
      ({ agent, filters, start } = await this.#request(req, query));
    } catch (e) {
      if (e instanceof FeedRequestError) return refuse(res, 400, "invalid_request", e.message);
      if (e instanceof StreamUnreadable) return this.#unreadable(req, res, e);
      throw e;
    }
    const js = jetstream(this.#o.nc, { timeout: this.#o.timeoutMs ?? 5000 });
    const opts = this.#consumerOptions(start, filters);
    let consumer: EventConsumer;
    try {
      consumer = await openEventConsumer(js, this.#o.stream, opts, { max_messages: 256 });
    } catch (e) {
      return this.#unreadable(req, res, e);
    }
    const { messages } = consumer;
    // The client may have gone while the consumer was being made (its close event is past), or the registry begun to stop.
    if (req.socket.destroyed || this.#stopped) {
      void consumer.close();
      if (!req.socket.destroyed) refuse(res, 503, "unavailable", "the registry is stopping");
      return;
    }

    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    let heartbeats: Subscription | undefined;
    const timer = setInterval(() => write(": keep-alive\n\n"), this.#o.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
    timer.unref();
    const close = (): void => {
      if (!this.#closers.delete(close)) return;
      clearInterval(timer);
      heartbeats?.unsubscribe();
      // The page's tab closed, the client was cut off or the registry stops: the consumer goes now, not when the server notices.
      void consumer.close();
      if (!res.writableEnded) res.end();
    };
    const maxBuffer = this.#o.maxBufferBytes ?? DEFAULT_MAX_BUFFER;
    const write = (chunk: string): void => {
      if (res.destroyed || res.writableEnded) return;
      res.write(chunk);
      if (res.writableLength > maxBuffer) {
        this.#o.log?.warn({ buffered: res.writableLength }, "an event stream client reads too slowly: cut off (it resumes from its last event id)");
        close();
        res.destroy();
      }
    };
    release();
    this.#closers.add(close);
    res.on("close", close);
    // The browser waits this long before it reconnects with Last-Event-ID.
    write("retry: 2000\n\n");

    if (query.get("heartbeats") === "1") heartbeats = this.#heartbeats(agent, write);

    try {
      for await (const m of messages) {
        // Also filtered here, for servers that could not take every filter subject.
        if (filters && !filters.some((f) => subjectMatches(f, m.subject))) continue;
        const event = this.#parse(m.data);
        const shown = event && (await this.#o.visibility.shown(event));
        // Re-serialised: one line whatever the publisher wrote, so no `data:` line can be split.
        if (shown) write(`id: ${m.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(shown)}\n\n`);
      }
    } finally {
      close();
    }
  }

  /** The request's filters and where to start; a bad parameter throws FeedRequestError, an unreadable stream StreamUnreadable. */
  async #request(req: IncomingMessage, query: URLSearchParams): Promise<{ agent: string | undefined; filters: string[] | undefined; start: Start }> {
    const agent = query.get("agent") ?? undefined;
    if (agent !== undefined && !AGENT_TYPE_RE.test(agent)) throw new FeedRequestError(`agent: not an agent type: ${JSON.stringify(agent.slice(0, 140))}`);
    const types = (query.get("types") ?? "").split(",").filter((t) => t !== "");
    if (types.length > 16) throw new FeedRequestError("types: at most 16");
    let filters: string[] | undefined;
    try {
      filters = filterSubjects({ types, agentType: agent, prefix: this.#o.prefix });
    } catch (e) {
      throw new FeedRequestError(`types: ${(e as Error).message}`);
    }
    return { agent, filters, start: await this.#start(req, query) };
  }

  /** Filtered by the server where it can: one subject always, several only on servers that take them (the loop filters again). */
  #consumerOptions(start: Start, filters: string[] | undefined): Start {
    const opts: Start = { ...start };
    if (filters?.length === 1) opts.filter_subjects = filters[0];
    else if (filters && supportsManyFilters(this.#o.nc)) opts.filter_subjects = filters;
    if (this.#o.consumerInactiveMs !== undefined) opts.inactive_threshold = this.#o.consumerInactiveMs;
    return opts;
  }

  /** The core NATS heartbeats (of `agent`, or all), written without an id since they are not stored. */
  #heartbeats(agent: string | undefined, write: (chunk: string) => void): Subscription {
    return this.#o.nc.subscribe(`${this.#o.prefix}.agent.heartbeat.${agent ?? ">"}`, {
      callback: (err, m) => {
        if (err) return;
        const event = this.#parse(m.data);
        const shown = event && this.#o.visibility.shownNow(event);
        if (shown) write(`event: ${event.type}\ndata: ${JSON.stringify(shown)}\n\n`);
      },
    });
  }

  /** 503: the page's browser gets a reason it can show; the log names the request without its token. */
  #unreadable(req: IncomingMessage, res: ServerResponse, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.#o.log?.warn({ err, path: redactUrl(req.url ?? "/") }, "the web page's event stream cannot be read");
    refuse(res, 503, "unavailable", `the events stream cannot be read: ${message}`);
  }

  /** A message as a CloudEvent with a one-line type; null when it is not one. */
  #parse(data: Uint8Array): (Record<string, unknown> & { type: string }) | null {
    try {
      const event = JSON.parse(this.#decoder.decode(data)) as { type?: unknown };
      if (typeof event !== "object" || event === null || Array.isArray(event) || typeof event.type !== "string" || /[\r\n]/.test(event.type)) return null;
      return event as Record<string, unknown> & { type: string };
    } catch {
      return null; // the stream may be shared with other publishers
    }
  }

  async #start(req: IncomingMessage, query: URLSearchParams): Promise<Start> {
    const lastId = header(req, "last-event-id") ?? query.get("last_event_id");
    if (lastId !== null && lastId !== "") {
      if (!/^\d{1,15}$/.test(lastId)) throw new FeedRequestError("Last-Event-ID: a stream sequence");
      return startPolicy(Number(lastId) + 1);
    }
    const since = query.get("since");
    if (since !== null) {
      try {
        return startPolicy(since.slice(0, 64));
      } catch (e) {
        throw new FeedRequestError((e as Error).message);
      }
    }
    const recent = query.get("recent");
    if (recent !== null) {
      if (!/^\d{1,4}$/.test(recent) || Number(recent) > MAX_RECENT) throw new FeedRequestError(`recent: 0 to ${MAX_RECENT}`);
      let state;
      try {
        const jsm = await jetstreamManager(this.#o.nc, { timeout: this.#o.timeoutMs ?? 5000 });
        ({ state } = await jsm.streams.info(this.#o.stream));
      } catch (e) {
        throw new StreamUnreadable((e as Error).message, { cause: e });
      }
      return startPolicy(Math.max(1, state.first_seq, state.last_seq - Number(recent) + 1));
    }
    return startPolicy(undefined);
  }
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === "string" ? v : null;
}

function refuse(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ error: { code, message } });
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body), "Cache-Control": "no-store" });
  res.end(body);
}
