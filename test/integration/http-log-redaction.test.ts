/**
 * A request that fails is logged with its path, and a credential in its query string is not:
 * the ops server (which the registry, its /ui and the audit mirror share) and the MCP front,
 * each driven over HTTP into its catch-all error with the logs captured as JSON lines.
 */
import { afterEach, expect, it } from "vitest";
import { createMetrics } from "../../src/adapters/http/metrics.js";
import { createOpsServer } from "../../src/kit/ops-server.js";
import { startMcpHttp, type McpHttpEndpoint } from "../../src/mcp/http-server.js";
import { captureLogs } from "../harness/registry.js";

const SECRET = "s3cret-in-a-query";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

it("the ops server logs a failed request's path with its token and other credentials redacted", async () => {
  const { logger, lines } = captureLogs();
  const ops = createOpsServer({ host: "127.0.0.1", port: 0, registry: createMetrics().registry, health: () => ({ live: true, ready: true, checks: {} }), logger });
  ops.serveUi(() => Promise.reject(new Error("the page broke")));
  closers.push(() => ops.close());
  const port = await ops.listen();
  const res = await fetch(`http://127.0.0.1:${port}/ui/events?recent=200&token=${SECRET}&access_token=${SECRET}&password=${SECRET}`);
  expect(res.status).toBe(500);
  const failed = lines.filter((l) => l.msg === "ops request failed");
  expect(failed.map((l) => l["path"])).toEqual(["/ui/events?recent=200&token=[redacted]&access_token=[redacted]&password=[redacted]"]);
  expect(lines.map((l) => JSON.stringify(l)).filter((l) => l.includes(SECRET))).toEqual([]);
});

it("the MCP front logs a failed request's path with its credentials redacted", async () => {
  const { logger, lines } = captureLogs();
  const endpoint: McpHttpEndpoint = await startMcpHttp({
    host: "127.0.0.1",
    port: 0,
    guard: { allowedHosts: ["127.0.0.1"], allowedOrigins: [] },
    newServer: () => {
      throw new Error("the tools broke");
    },
    log: logger,
  });
  closers.push(() => endpoint.close());
  const res = await fetch(`${endpoint.url}?access_token=${SECRET}&api_key=${SECRET}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(res.status).toBe(500);
  const failed = lines.filter((l) => l.msg === "MCP HTTP request failed");
  expect(failed.map((l) => [l["method"], l["path"]])).toEqual([["POST", "/mcp?access_token=[redacted]&api_key=[redacted]"]]);
  expect(lines.map((l) => JSON.stringify(l)).filter((l) => l.includes(SECRET))).toEqual([]);
});
