/**
 * A TCP proxy in front of one nats-server's gateway port, the address that server advertises
 * to the other regions, so every gateway connection to it passes here. The dialling server's
 * first line is CONNECT {"gateway":"<its region>",...}: the proxy knows which region each
 * connection comes from and can cut the ones from given regions, as a WAN link that fails,
 * while the servers, their clients and their JetStream run on untouched.
 */
import { createServer, connect, type Server, type Socket } from "node:net";

export type GatewayProxy = AsyncDisposable & {
  /** host:port to advertise and to dial. */
  readonly address: string;
  /** From now on refuses exactly these regions: drops their connections and their new ones. */
  setRefused(regions: readonly string[]): void;
  close(): Promise<void>;
};

type Pair = { client: Socket; upstream: Socket; from: string | null };

export async function startGatewayProxy(upstreamPort: number, host = "127.0.0.1"): Promise<GatewayProxy> {
  const pairs = new Set<Pair>();
  const refused = new Set<string>();
  const drop = (p: Pair): void => {
    pairs.delete(p);
    p.client.destroy();
    p.upstream.destroy();
  };
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, host);
    const pair: Pair = { client, upstream, from: null };
    pairs.add(pair);
    let head = "";
    client.on("data", (chunk) => {
      if (pair.from === null) {
        head += chunk.toString("latin1");
        const line = /CONNECT (\{.*?\})\r\n/.exec(head);
        if (line) {
          pair.from = String((JSON.parse(line[1]!) as { gateway?: unknown }).gateway ?? "");
          if (refused.has(pair.from)) return drop(pair);
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => client.write(chunk));
    for (const s of [client, upstream]) {
      s.on("error", () => drop(pair));
      s.on("close", () => drop(pair));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const bound = server.address();
  const port = typeof bound === "object" && bound ? bound.port : 0;
  const close = async () => {
    for (const p of pairs) drop(p);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    address: `${host}:${port}`,
    setRefused: (regions) => {
      refused.clear();
      for (const r of regions) refused.add(r);
      for (const p of pairs) if (p.from !== null && refused.has(p.from)) drop(p);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
