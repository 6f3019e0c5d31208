/**
 * The MCP client configurations of docs/mcp.md, started as a client starts them: the command
 * and arguments as written, from a folder that is not the checkout, with `agent-registry` on
 * the PATH as `npm install -g .` puts it there (a link to the built dist/cli/main.js). Only the
 * deployment's values change: NATS_URL names the test's server, which has no credentials.
 * Each must answer `initialize` and list the tools. `npx agent-registry` failed this: run
 * outside the checkout, npx looks the name up on the npm registry.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, ensureBuilt } from "../harness/cli.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { startRegistry, type TestRegistry } from "../harness/registry.js";
import { extractBlocks } from "../unit/doc-blocks.js";

type StdioConfig = { name: string; command: string; args: string[]; env: Record<string, string> };

/** Every stdio server of the doc's JSON blocks (`mcpServers` or VS Code's `servers`). */
function stdioConfigs(): StdioConfig[] {
  const blocks = extractBlocks("docs/mcp.md", readFileSync(join(ROOT, "docs/mcp.md"), "utf8")).filter((b) => b.lang === "json");
  return blocks.flatMap((b) => {
    const doc = JSON.parse(b.code) as { mcpServers?: Record<string, any>; servers?: Record<string, any> };
    const servers = Object.entries({ ...doc.mcpServers, ...doc.servers });
    return servers
      .filter(([, s]) => typeof s.command === "string")
      .map(([name, s]) => ({ name: `docs/mcp.md:${b.line} ${name}`, command: s.command as string, args: (s.args ?? []) as string[], env: (s.env ?? {}) as Record<string, string> }));
  });
}

const configs = stdioConfigs();
let server: NatsTestServer;
let registry: TestRegistry;
let bin: string;
let elsewhere: string;

beforeAll(async () => {
  await ensureBuilt();
  server = await withNatsServer();
  registry = await startRegistry(server.url, { prefix: "registry" });
  // What `npm install -g .` does for package.json's `bin`: a link named agent-registry.
  bin = mkdtempSync(join(tmpdir(), "mcp-bin-"));
  symlinkSync(CLI, join(bin, "agent-registry"));
  elsewhere = mkdtempSync(join(tmpdir(), "mcp-client-"));
}, 120_000);

afterAll(async () => {
  await registry?.stop();
  await server?.[Symbol.asyncDispose]();
  rmSync(bin, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

describe("docs/mcp.md's client configurations", () => {
  it("has stdio configurations, none of them through npx", () => {
    expect(configs.length).toBeGreaterThanOrEqual(2);
    for (const c of configs) expect(c.command, c.name).not.toBe("npx");
  });

  it.each(configs.map((c) => [c.name, c] as const))("%s starts from another folder and lists the tools", async (_name, config) => {
    // The deployment's own values give way to the test server's: no credentials file here.
    const { NATS_CREDS: _creds, ...env } = config.env;
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args,
      cwd: elsewhere,
      env: { ...env, NATS_URL: server.url, HOME: elsewhere, PATH: [bin, dirname(process.execPath), process.env.PATH ?? ""].join(delimiter) },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: "docs-config-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name), stderr).toContain("capability_lookup");
    } finally {
      await client.close();
    }
  });
});
