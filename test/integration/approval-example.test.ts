/**
 * docs/trust.md's worked example of the approval gate on a real registry: its shell block
 * writes the trust file, the registry starts with it, the documented registration is sent on
 * acme's subject, and each `agent-registry` command of the section runs through the built CLI
 * and prints what the document shows (numbers aside: revisions and counts depend on the run).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellCommands } from "../unit/doc-blocks.js";
import { ensureBuilt } from "../harness/cli.js";
import { consoleSteps, expectConsoleStep, sectionBlocks } from "../harness/doc-sections.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, startRegistry, type TestRegistry } from "../harness/registry.js";

const DOC = "docs/trust.md";
const SECTION = "## The approval gate";

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "approval-example-"));
  for (const b of sectionBlocks(DOC, SECTION).filter((b) => b.lang === "sh")) {
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
    const blocks = sectionBlocks(DOC, SECTION);
    const registration = JSON.parse(blocks.find((b) => b.lang === "json")!.code) as Record<string, unknown>;
    const r = await c.request("tenant.acme.register.acme-invoices", registration);
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    expect(r.body.approval).toEqual({ state: "pending" });

    await ensureBuilt();
    const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
    const steps = blocks.filter((b) => b.lang === "console").flatMap(consoleSteps);
    expect(steps.map((s) => shellCommands(s.command)[0]!.words[1])).toEqual(["lookup", "pending", "approve", "lookup", "reject", "pending"]);
    for (const step of steps) {
      const command = shellCommands(step.command)[0]!.words[1];
      await expectConsoleStep(DOC, step, env, { writes: command === "approve" || command === "reject" });
    }
  });
});
