/**
 * A TCP proxy in front of a nats-server that picks out connections by the name their client
 * gives in CONNECT, and can hold back what the server sends to them (as a connection that is
 * seconds behind: its messages wait in the server's buffer for it) or refuse them (a connection
 * that is down), while the same process's other connections go through untouched. nats-server
 * has no fault of its own that reaches one connection of a process.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export type ConnectionMatch = (name: string) => boolean;

export type NatsProxy = AsyncDisposable & {
  url: string;
  /** The names of every connection seen so far, in the order they were made. */
  readonly names: string[];
  /** From now on, what the server sends to matching connections waits here. */
  hold(match: ConnectionMatch): void;
  /** Delivers what was held, in order, and stops holding. */
  release(): void;
  /** Closes matching connections now and each one they make until `admit()`. */
  refuse(match: ConnectionMatch): void;
  admit(): void;
};

type Pair = { client: Socket; upstream: Socket; name: string | null; held: Buffer[] };

export async function withNatsProxy(serverUrl: string): Promise<NatsProxy> {
  const target = new URL(serverUrl);
  const pairs = new Set<Pair>();
  const names: string[] = [];
  let holding: ConnectionMatch | null = null;
  let refusing: ConnectionMatch | null = null;
  const matches = (m: ConnectionMatch | null, p: Pair): boolean => m !== null && p.name !== null && m(p.name);
  const drop = (p: Pair): void => {
    pairs.delete(p);
    p.client.destroy();
    p.upstream.destroy();
  };

  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const pair: Pair = { client, upstream, name: null, held: [] };
    pairs.add(pair);
    let head = "";
    client.on("data", (chunk) => {
      if (pair.name === null) {
        // The client's first line is CONNECT {json}: its name decides what this proxy does with it.
        head += chunk.toString("latin1");
        const line = /CONNECT (\{.*?\})\r\n/.exec(head);
        if (line) {
          pair.name = String((JSON.parse(line[1]!) as { name?: unknown }).name ?? "");
          names.push(pair.name);
          if (matches(refusing, pair)) return drop(pair);
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      if (matches(holding, pair)) pair.held.push(chunk);
      else client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on("error", () => drop(pair));
      s.on("close", () => drop(pair));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;

  return {
    url: `nats://127.0.0.1:${port}`,
    names,
    hold: (match) => {
      holding = match;
    },
    release: () => {
      holding = null;
      for (const p of pairs) for (const chunk of p.held.splice(0)) p.client.write(chunk);
    },
    refuse: (match) => {
      refusing = match;
      for (const p of pairs) if (matches(match, p)) drop(p);
    },
    admit: () => {
      refusing = null;
    },
    [Symbol.asyncDispose]: async () => {
      for (const p of pairs) drop(p);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
