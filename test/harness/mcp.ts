/**
 * `agent-registry mcp` driven the way MCP clients drive it: the SDK's own Client over the
 * StdioClientTransport (which spawns the command, run from source with tsx) or over the
 * StreamableHTTPClientTransport (against the command started with --http-port 0; the URL comes
 * from its log on stderr). Results are read as loose JSON, as any client reads them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT } from "./cli.js";
import { waitFor } from "./wait.js";

/** The command line that runs the CLI from source. */
export const CLI_FROM_SOURCE = ["--import", "tsx", "src/cli/main.ts"];

const baseEnv = (env: Record<string, string>): Record<string, string> => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env });

export type McpConnection = { client: Client; stderr: () => string; close(): Promise<void> };

/** An SDK client connected over stdio to `agent-registry mcp <args>`. */
export async function mcpOverStdio(args: string[], env: Record<string, string> = {}): Promise<McpConnection> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...CLI_FROM_SOURCE, "mcp", ...args], env: baseEnv(env), cwd: ROOT, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`could not connect over stdio: ${(e as Error).message}\nstderr: ${err}`);
  }
  return { client, stderr: () => err, close: () => client.close() };
}

export type McpHttpProcess = { url: string; port: number; child: ChildProcess; stderr: () => string; stop(): Promise<number | null> };

/** `agent-registry mcp --http-port 0 <args>` as a process, once it says where it listens. */
export async function startMcpHttpProcess(args: string[], env: Record<string, string> = {}): Promise<McpHttpProcess> {
  const child = spawn(process.execPath, [...CLI_FROM_SOURCE, "mcp", "--http-port", "0", ...args], { cwd: ROOT, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  let out = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let url = "";
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`);
      url = /"url":"(http:[^"]+)"/.exec(err)?.[1] ?? "";
      return url !== "";
    },
    { timeoutMs: 20_000, message: `the MCP HTTP endpoint to start; stderr: ${err} stdout: ${out}` },
  );
  return {
    url,
    port: Number(new URL(url).port),
    child,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** An SDK client connected over Streamable HTTP. */
export async function mcpOverHttp(url: string, headers: Record<string, string> = {}): Promise<McpConnection> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => "", close: () => client.close() };
}

/** A tool call's structured content and error flag. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; body: any }> {
  const r = await client.callTool({ name, arguments: args });
  return { isError: r.isError === true, body: r.structuredContent as any };
}
