/**
 * A server-sent events reader over fetch, as a test needs it: every event received so far
 * (id, event, data parsed as JSON, and the comments), and close().
 */
export type SseEvent = { id: string | null; event: string; data: any };

export type SseStream = {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  /** True once the server ended the stream (or the connection broke). */
  ended: boolean;
  close(): void;
};

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: abort.signal });
  const stream: SseStream = { status: res.status, headers: res.headers, events: [], comments: [], ended: false, close: () => abort.abort() };
  if (!res.ok || !res.body) {
    stream.ended = true;
    await res.body?.cancel().catch(() => undefined);
    return stream;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | null = null;
          let event = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) stream.comments.push(line.slice(1).trim());
            else if (line.startsWith("id: ")) id = line.slice(4);
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (data.length > 0) stream.events.push({ id, event, data: JSON.parse(data.join("\n")) });
        }
      }
    } catch {
      // aborted by close(), or the server cut the connection
    } finally {
      stream.ended = true;
    }
  })();
  return stream;
}
