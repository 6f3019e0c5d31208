/**
 * One stateless MCP exchange on Node's HTTP objects through the SDK's web-standard transport.
 *
 * The SDK's Node transport (StreamableHTTPServerTransport) wraps the same web-standard transport
 * in @hono/node-server's adapter, which writes a JSON answer by reading its body stream without
 * blocking and, when the second read is not settled within a microtask, waits a timer turn
 * (setTimeout, 1 ms or more) before it looks again. In stateless JSON mode the answer is always
 * one complete JSON text, so that wait bought nothing and was most of what MCP added to a
 * `capability_lookup` over the bare HTTP front (issue 42). Here the answer is read whole and
 * written with one `end`. The body was read and parsed before (http-server.ts), so the request
 * handed to the transport carries no body stream.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

export async function statelessExchange(server: Server, req: IncomingMessage, res: ServerResponse, parsedBody: unknown): Promise<void> {
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  const request = new Request(`http://localhost${req.url ?? "/"}`, { method: "POST", headers: headersOf(req) });
  const answer = await transport.handleRequest(request, { parsedBody });
  const text = answer.body === null ? "" : await answer.text();
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  if (text !== "") headers["content-length"] = String(Buffer.byteLength(text));
  res.writeHead(answer.status, headers);
  res.end(text);
}

/** The request's headers as web Headers (a repeated header joined, as fetch does). */
function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return headers;
}
