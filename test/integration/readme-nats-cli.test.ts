/**
 * The README's `nats` examples, run as a reader runs them: every `nats ...` command of its sh
 * blocks, with the real `nats` CLI (NATS_CLI_BIN, or `nats` on PATH; scripts/install-nats.sh
 * builds the pinned one), against a real registry on the default prefix. Each must get a
 * reply that is the answer the README promises, not an error, so the README cannot drift
 * from the product. The registry already holds examples/summarizer.yaml, as it does for a
 * newcomer who ran examples/ first: the README's agent must not collide with it (the same
 * type and version with another spec is refused as a conflict).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { parse as parseYaml } from "yaml";
import { configOf, RawClient, startRegistry, type TestRegistry } from "../harness/registry.js";
import { extractBlocks, shellCommands, type ShellCommand } from "../unit/doc-blocks.js";

const root = new URL("../../", import.meta.url).pathname;
const readme = extractBlocks("README.md", readFileSync(join(root, "README.md"), "utf8"));
const natsCommands: ShellCommand[] = readme
  .filter((b) => b.lang === "sh")
  .flatMap((b) => shellCommands(b.code, b.line + 1))
  .filter((c) => c.words[0] === "nats");

const cli = process.env.NATS_CLI_BIN?.trim() || findNatsServerBinary("nats");

let server: NatsServerHandle;
let registry: TestRegistry;
// The CLI reads its contexts from here: an empty folder, so a developer's selected context
// cannot send the requests elsewhere; NATS_URL alone names the server.
const configHome = mkdtempSync(join(tmpdir(), "nats-cli-config-"));

beforeAll(async () => {
  if (!cli) {
    throw new Error(
      "the README test needs the `nats` CLI: set NATS_CLI_BIN, or put `nats` on PATH " +
        '(`eval "$(scripts/install-nats.sh)"` builds the pinned one with Go and prints NATS_CLI_BIN)',
    );
  }
  server = await startNatsServer({ jetstream: true });
  // The README's subjects carry the default prefix, so this registry has the server to itself.
  registry = await startRegistry(server.url, { prefix: "registry" });
  const example = parseYaml(readFileSync(join(root, "examples", "summarizer.yaml"), "utf8")) as { agent_type: string };
  const raw = await RawClient.connect(server.url, configOf(registry).prefix);
  try {
    const r = await raw.request(`register.${example.agent_type}`, { spec: example, instance_id: "examples-1" });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
  } finally {
    await raw.close();
  }
}, 60_000);

afterAll(async () => {
  await registry?.stop();
  await server?.stop();
  rmSync(configHome, { recursive: true, force: true });
});

/** Runs one README command with the real CLI; the reply body is the JSON line of its stdout. */
function run(command: ShellCommand): Promise<{ code: number; stdout: string; stderr: string; reply: unknown }> {
  return new Promise((resolve) => {
    execFile(cli!, command.words.slice(1), { env: { ...process.env, NATS_URL: server.url, XDG_CONFIG_HOME: configHome, NO_COLOR: "1" }, timeout: 20_000 }, (err, stdout, stderr) => {
      const line = stdout.split("\n").find((l) => l.trimStart().startsWith("{"));
      let reply: unknown;
      try {
        reply = line === undefined ? undefined : JSON.parse(line);
      } catch {
        reply = undefined;
      }
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr, reply });
    });
  });
}

/** Resolves once the registry's view has applied `revision` (a query with it as min_revision). */
async function viewHolds(revision: number): Promise<void> {
  const raw = await RawClient.connect(server.url, configOf(registry).prefix);
  try {
    const r = await raw.request("list", { limit: 1, min_revision: revision });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
  } finally {
    await raw.close();
  }
}

describe("the README's nats CLI examples", () => {
  it("has the examples this test runs", () => {
    expect(natsCommands.map((c) => c.words.slice(0, 3).join(" "))).toEqual(["nats req registry.register.greeter", "nats req registry.lookup"]);
  });

  it("registers the greeter beside the examples' summarizer, then finds it by its capability", async () => {
    const answers = [];
    for (const command of natsCommands) {
      const r = await run(command);
      const where = `README.md:${command.line}: ${command.words.slice(0, 3).join(" ")}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
      // The CLI exits 0 even on "no responders": the reply itself is what proves the example.
      expect(r.code, where).toBe(0);
      expect(r.reply, where).toBeTypeOf("object");
      expect(r.reply, where).not.toHaveProperty("error");
      answers.push(r.reply as Record<string, any>);
      // A reader types the next command long after this reply; the CLI is faster, and the README's
      // lookup sends no min_revision: go on once the registry's view holds what this command wrote.
      const revision = (r.reply as { revision?: unknown }).revision;
      if (typeof revision === "number") await viewHolds(revision);
    }
    const [registered, lookup] = answers;
    expect(registered).toMatchObject({ agent_type: "greeter", heartbeat_subject: expect.stringMatching(/^registry\.heartbeat\.greeter\./) });
    expect(lookup!["providers"]).toEqual([expect.objectContaining({ agent_type: "greeter", nats_subject: "agent.tasks.greeter", ready_instances: 1 })]);
  });
});
