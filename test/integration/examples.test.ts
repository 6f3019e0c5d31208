/**
 * examples/ end to end, each one a process as a user runs it: the service (`serve`), the
 * agent, and the coordinator that looks the agent up and prints its answer. Then the agent
 * stops on SIGTERM, deregisters, and the coordinator finds no provider any more.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { connect, RegistryClient } from "../../src/client/index.js";
import { spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";
import { waitFor } from "../harness/wait.js";

const PREFIX = "examples.registry";
let server: NatsServerHandle;
let service: RegistryProcess;
let env: Record<string, string>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  server = await startNatsServer({ jetstream: true });
  env = { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX };
  service = await spawnRegistry("examples", { ...env, REGISTRY_BUCKET: "examples", REGISTRY_EVENTS_STREAM: "EXAMPLES_EVENTS" });
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await service?.stop();
  await server?.stop();
});

const tsx = (script: string, args: string[] = []) => [process.execPath, ["--import", "tsx", script, ...args]] as const;

function coordinator(text: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [node, args] = tsx("examples/coordinator.ts", [text]);
  return new Promise((resolve) => {
    execFile(node, args, { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

it("the coordinator finds the agent through the registry and prints its answer", async () => {
  const [node, args] = tsx("examples/agent.ts");
  const agent = spawn(node, args, { env: { ...process.env, ...env, INSTANCE_ID: "example-1" }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(agent);
  let out = "";
  agent.stdout.on("data", (c: Buffer) => (out += c.toString()));
  agent.stderr.on("data", (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => agent.once("exit", (code) => resolve(code)));

  await waitFor(() => /serving text\.summarize on agents\.summarizer\.tasks/.test(out), { timeoutMs: 20_000, message: `the agent serving: ${out}` });
  expect(out).toMatch(/registered as example-1, heartbeat every 30000 ms/);
  // The coordinator's lookup sends no min_revision: it runs once the registry's view holds the agent.
  const watcher = await connect({ servers: server.url });
  try {
    const registry = new RegistryClient(watcher, { prefix: PREFIX });
    await waitFor(async () => (await registry.lookup("text.summarize")).providers.length === 1, { message: "summarizer in the registry's view" });
  } finally {
    await watcher.close();
  }

  const text = "NATS carries the messages. The registry tracks the agents. Coordinators look them up. Nobody reads this one.";
  const r = await coordinator(text);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^provider: summarizer 1\.0\.0 on agents\.summarizer\.tasks \(registry revision \d+\)$/m);
  expect(r.stdout).toMatch(/^answer: NATS carries the messages\. The registry tracks the agents\.$/m);

  // SIGTERM: draining, deregistered, connection drained, exit 0.
  agent.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(out).toMatch(/deregistered/);
  const nc = await connect({ servers: server.url });
  try {
    // The agent deregistered before it exited; the registry's view shows it a moment later.
    const client = new RegistryClient(nc, { prefix: PREFIX });
    await waitFor(async () => (await client.get("summarizer")).agent.status === "deregistered", { message: "summarizer deregistered in the registry's view" });
    const { agent: view } = await client.get("summarizer");
    expect(view).toMatchObject({ status: "deregistered", instances: [] });
  } finally {
    await nc.close();
  }

  const none = await coordinator(text);
  expect(none.code).toBe(1);
  expect(none.stderr).toMatch(/no ready provider of text\.summarize/);
});
