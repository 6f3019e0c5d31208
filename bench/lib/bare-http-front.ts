/**
 * The MCP benchmark's floor: an HTTP front with no MCP in it. Each POST's body names a
 * capability; the front asks the registry with RegistryClient.lookup over NATS, as the MCP
 * front does, and answers the reply as JSON. Whatever the MCP front costs beyond this is the
 * MCP protocol's and the SDK's; what this costs beyond a NATS lookup is the extra hop itself.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "../../src/client/connection.js";
import { RegistryClient } from "../../src/client/registry-client.js";

const nc = await connect({ servers: process.env["NATS_URL"], name: "bench-bare-http-front" });
const client = new RegistryClient(nc);
const http = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const { capability } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { capability: string };
    client.lookup(capability).then(
      (reply) => {
        const text = JSON.stringify(reply);
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      },
      (err: unknown) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(err));
      },
    );
  });
});
http.listen(0, "127.0.0.1", () => process.stdout.write(`url http://127.0.0.1:${(http.address() as AddressInfo).port}/lookup\n`));

const stop = (): void => {
  http.close();
  void nc.drain().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
