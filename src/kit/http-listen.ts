/**
 * Binding an HTTP server of the registry (the ops port, the discovery front) with the bounds
 * they all want: a request must arrive in full within 10 s and its headers within 5 s, an idle
 * kept-alive connection is closed after 5 s, at most 50 headers; a request that does not parse
 * is answered 400 and its connection closed. Their clients are probes, scrapes and API calls,
 * all small, so slow or idle clients must not hold sockets.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Binds `s`; resolves with the port bound, rejects when binding fails. Later errors go to `onError`. */
export function listenBounded(s: Server, host: string, port: number, onError: (err: Error) => void): Promise<number> {
  s.requestTimeout = 10_000;
  s.headersTimeout = 5_000;
  s.keepAliveTimeout = 5_000;
  s.maxHeadersCount = 50;
  s.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });
  return new Promise<number>((resolve, reject) => {
    s.once("error", reject);
    s.listen({ host, port }, () => {
      s.off("error", reject);
      s.on("error", onError);
      resolve((s.address() as AddressInfo).port);
    });
  });
}
