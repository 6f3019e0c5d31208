/**
 * docs/trust.md's worked example of the approval gate on a real registry: its shell block
 * writes the trust file, the registry starts with it, the documented registration is sent on
 * acme's subject, and each `agent-registry` command of the section runs through the built CLI
 * and prints what the document shows (numbers aside: revisions and counts depend on the run).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractBlocks, shellCommands, type DocBlock } from "../unit/doc-blocks.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const root = new URL("../../", import.meta.url).pathname;
const DOC = "docs/trust.md";

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

/** The blocks of the section on the approval gate, in order. */
function sectionBlocks(): DocBlock[] {
  const text = readFileSync(join(root, DOC), "utf8");
  const from = text.split("\n").findIndex((l) => l === "## The approval gate") + 1;
  const to = text.split("\n").findIndex((l, i) => i >= from && l.startsWith("## ") && l !== "## The approval gate") + 1;
  expect(from).toBeGreaterThan(0);
  return extractBlocks(DOC, text).filter((b) => b.line > from && (to === 0 || b.line < to));
}

/** Each `$ command` of a console block with the lines it prints. */
function consoleSteps(block: DocBlock): Array<{ command: string; output: string; line: number }> {
  const steps: Array<{ command: string; output: string[]; line: number }> = [];
  block.code.split("\n").forEach((l, i) => {
    if (l.startsWith("$ ")) steps.push({ command: l.slice(2), output: [], line: block.line + 1 + i });
    else steps.at(-1)?.output.push(l);
  });
  return steps.map((s) => ({ ...s, output: s.output.join("\n").trim() }));
}

/** Numbers standing alone (revisions, counts) as N, whitespace runs as one space: what a run may change. */
const normal = (text: string): string => text.trim().replace(/(?<![\d.])\d+(?![\d.])/g, "N").replace(/[ \t]+/g, " ");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "approval-example-"));
  for (const b of sectionBlocks().filter((b) => b.lang === "sh")) {
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", b.code], { cwd: dir, encoding: "utf8" });
    expect(run.status, `${DOC}:${b.line}: ${run.stderr}`).toBe(0);
  }
  server = await withNatsServer();
  reg = await startRegistry(server.url, { trustFile: join(dir, "approval-trust.json") });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/trust.md, the approval gate's worked example", () => {
  it("stores the documented registration pending, then the operator's commands print what the document shows", { timeout: 180_000 }, async () => {
    const blocks = sectionBlocks();
    const registration = JSON.parse(blocks.find((b) => b.lang === "json")!.code) as Record<string, unknown>;
    const r = await c.request("tenant.acme.register.acme-invoices", registration);
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(r.body.approval).toEqual({ state: "pending" });

    await ensureBuilt();
    const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
    const steps = blocks.filter((b) => b.lang === "console").flatMap(consoleSteps);
    expect(steps.map((s) => shellCommands(s.command)[0]!.words[1])).toEqual(["lookup", "pending", "approve", "lookup", "reject", "pending"]);
    for (const step of steps) {
      const [bin, ...args] = shellCommands(step.command)[0]!.words;
      expect(bin).toBe("agent-registry");
      const decides = args[0] === "approve" || args[0] === "reject";
      let last = "";
      // A decision runs once; a read may run on a view that has not applied the last write yet.
      await waitFor(
        async () => {
          const out = await runCli(args, env);
          expect(out.code, `${DOC}:${step.line}: ${out.stderr}`).toBe(0);
          last = out.stdout;
          return decides || normal(out.stdout) === normal(step.output);
        },
        { timeoutMs: 10_000, message: `${DOC}:${step.line}` },
      );
      expect(normal(last), `${DOC}:${step.line}: ${step.command}`).toBe(normal(step.output));
    }
  });
});
