/**
 * /ui/events read with fetch rather than EventSource. An EventSource hands a named event
 * (`event: <type>`) only to a listener of that name, so a page listening to the types it knows
 * drops every other: an event type added after the page was built, an approval event, an alert
 * of a newer replica. Reading the stream itself, the page gets every event whatever its type.
 * What EventSource did is kept: the server's `retry:` delay, reconnecting with Last-Event-ID
 * (resuming after the last stored event seen), and a bound on what one event may hold.
 */

/** One server-sent event: `id` is "" for events that have none (heartbeats). */
export type ServerEvent = { id: string; type: string; data: string };

/** A line (or an event's data) longer than this is not a registry event: the connection is dropped and made again. */
const MAX_EVENT_CHARS = 1024 * 1024;
const DEFAULT_RETRY_MS = 2000;

export type EventStream = { close(): void };

export function readEvents(url: string, onEvent: (e: ServerEvent) => void, onState?: (open: boolean) => void): EventStream {
  const abort = new AbortController();
  let lastId = "";
  let retryMs = DEFAULT_RETRY_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function connect(): Promise<void> {
    try {
      const res = await fetch(url, {
        headers: { Accept: "text/event-stream", ...(lastId ? { "Last-Event-ID": lastId } : {}) },
        credentials: "same-origin",
        cache: "no-store",
        signal: abort.signal,
      });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      onState?.(true);
      await parse(res.body);
    } catch {
      // dropped, refused or aborted: tried again below unless closed
    }
    if (abort.signal.aborted) return;
    onState?.(false);
    timer = setTimeout(() => void connect(), retryMs);
  }

  /** The text/event-stream format (HTML's "server-sent events"): fields up to a blank line make an event. */
  async function parse(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let id = lastId;
    let type = "";
    let data: string[] = [];
    let dataChars = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (line === "") {
          if (data.length > 0) {
            lastId = id;
            onEvent({ id, type: type || "message", data: data.join("\n") });
          }
          type = "";
          data = [];
          dataChars = 0;
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: the server's keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + (line[colon + 1] === " " ? 2 : 1));
        if (field === "data") {
          data.push(text);
          dataChars += text.length;
          if (dataChars > MAX_EVENT_CHARS) throw new Error("an event too large");
        } else if (field === "event") type = text;
        else if (field === "id" && !text.includes("\u0000")) id = text;
        else if (field === "retry" && /^\d+$/.test(text)) retryMs = Number(text);
      }
      if (buffer.length > MAX_EVENT_CHARS) throw new Error("a line too long");
    }
  }

  void connect();
  return {
    close: () => {
      abort.abort();
      clearTimeout(timer);
    },
  };
}
