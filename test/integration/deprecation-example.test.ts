/**
 * docs/trust.md's worked example of deprecation on a real registry: two shared agents provide
 * text.summarize, `summarizer` registered first; `route` picks it until the operator deprecates
 * it, then its successor, while `lookup` still lists both (the deprecated one last, marked).
 * Each `agent-registry` command of the section runs through the built CLI and prints what the
 * document shows (revision numbers aside).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractBlocks, shellCommands, type DocBlock } from "../unit/doc-blocks.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const root = new URL("../../", import.meta.url).pathname;
const DOC = "docs/trust.md";
const SECTION = "## Deprecation";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

function sectionBlocks(): DocBlock[] {
  const text = readFileSync(join(root, DOC), "utf8");
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l === SECTION) + 1;
  const to = lines.findIndex((l, i) => i >= from && l.startsWith("## ") && l !== SECTION) + 1;
  expect(from).toBeGreaterThan(0);
  return extractBlocks(DOC, text).filter((b) => b.line > from && (to === 0 || b.line < to));
}

function consoleSteps(block: DocBlock): Array<{ command: string; output: string; line: number }> {
  const steps: Array<{ command: string; output: string[]; line: number }> = [];
  block.code.split("\n").forEach((l, i) => {
    if (l.startsWith("$ ")) steps.push({ command: l.slice(2), output: [], line: block.line + 1 + i });
    else steps.at(-1)?.output.push(l);
  });
  return steps.map((s) => ({ ...s, output: s.output.join("\n").trim() }));
}

/** Numbers standing alone (revisions) as N, whitespace runs as one space: what a run may change. */
const normal = (text: string): string => text.trim().replace(/(?<![\d.])\d+(?![\d.])/g, "N").replace(/[ \t]+/g, " ");

const summarizer = (type: string) => spec(type, { capabilities: [{ name: "text.summarize", description: `summarizes (${type})`, input_schema: { type: "object" }, output_schema: {} }] });

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  for (const type of ["summarizer", "summarizer-v2"]) {
    const r = await c.request(`register.${type}`, { spec: summarizer(type), instance_id: `${type}-1` });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
  }
});

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

describe("docs/trust.md, deprecation's worked example", () => {
  it("routes to the successor once the operator deprecates, and the commands print what the document shows", { timeout: 180_000 }, async () => {
    await waitFor(async () => (await c.request("route", { skill: "text.summarize" })).body.agent_type === "summarizer", { message: "route before" });
    await ensureBuilt();
    const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
    const steps = sectionBlocks().filter((b) => b.lang === "console").flatMap(consoleSteps);
    expect(steps.map((s) => shellCommands(s.command)[0]!.words[1])).toEqual(["deprecate", "lookup", "undeprecate"]);
    for (const step of steps) {
      const [bin, ...args] = shellCommands(step.command)[0]!.words;
      expect(bin).toBe("agent-registry");
      const decides = args[0] !== "lookup";
      let last = "";
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
      if (args[0] === "deprecate") {
        // Still routable, and the tie now goes to the successor.
        await waitFor(async () => (await c.request("route", { skill: "text.summarize" })).body.agent_type === "summarizer-v2", { message: "route after" });
        const route = await c.request("route", { skill: "text.summarize" });
        expect(route.body.candidates.map((x: { agent_type: string }) => x.agent_type)).toEqual(["summarizer-v2", "summarizer"]);
        expect(route.body.candidates[1].deprecated).toMatchObject({ by: "alice", reason: "replaced by summarizer-v2", successor: "summarizer-v2" });
      }
    }
    const after = await c.request("get", { agent_type: "summarizer" });
    expect(after.body.agent.deprecated).toBeUndefined();
  });
});
