/**
 * The start's log lines say whether the web page and the MCP front require a token, and read
 * the same as the project's loggers write them (test/harness/registry.ts censors what they
 * censor): "[redacted]" stands for a token that is set, and nothing is censored when none is.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { startRegistry, type LogLine, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const UI_TOKEN = "start-log-ui-token";
const MCP_TOKEN = "start-log-mcp-token";
let server: NatsTestServer;
const registries: TestRegistry[] = [];

beforeAll(async () => {
  server = await withNatsServer();
});
afterAll(async () => {
  for (const r of registries) await r.stop();
  await server?.stop();
});

async function started(overrides: Parameters<typeof startRegistry>[1]): Promise<LogLine[]> {
  const reg = await startRegistry(server.url, { mcpHttpPort: 0, ...overrides });
  registries.push(reg);
  await waitFor(() => reg.logs.some((l) => l.msg.startsWith("MCP server at")), { message: "the MCP front's start line" });
  return reg.logs;
}

const line = (logs: LogLine[], msg: (m: string) => boolean): LogLine => {
  const found = logs.find((l) => msg(l.msg));
  expect(found, "the log line").toBeDefined();
  return found!;
};
const pageLine = (logs: LogLine[]) => line(logs, (m) => m === "serving the web page");
const mcpLine = (logs: LogLine[]) => line(logs, (m) => m.startsWith("MCP server at"));
const configLine = (logs: LogLine[]) => line(logs, (m) => m === "starting")["config"] as Record<string, unknown>;

it("without tokens: the page and the MCP front say auth is off, and nothing reads as redacted", async () => {
  const logs = await started({});
  expect(pageLine(logs)).toMatchObject({ path: "/ui/", auth: "off" });
  expect(mcpLine(logs)).toMatchObject({ auth: "off" });
  expect(configLine(logs)).not.toHaveProperty("uiToken");
  expect(configLine(logs)).not.toHaveProperty("mcpToken");
  expect(logs.map((l) => JSON.stringify(l)).filter((l) => /\[redacted\]/i.test(l))).toEqual([]);
});

it("with tokens: they say auth is by token, the configuration shows each as [redacted], and no line holds one", async () => {
  const logs = await started({ uiToken: UI_TOKEN, mcpToken: MCP_TOKEN });
  expect(pageLine(logs)).toMatchObject({ path: "/ui/", auth: "token" });
  expect(mcpLine(logs)).toMatchObject({ auth: "token" });
  expect(configLine(logs)).toMatchObject({ uiToken: "[redacted]", mcpToken: "[redacted]" });
  const text = JSON.stringify(logs);
  expect(text).not.toContain(UI_TOKEN);
  expect(text).not.toContain(MCP_TOKEN);
});
