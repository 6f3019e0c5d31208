/**
 * docs/trust.md's worked example of deprecation on a real registry: two shared agents provide
 * text.summarize, `summarizer` registered first; `route` picks it until the operator deprecates
 * it, then its successor, while `lookup` still lists both (the deprecated one last, marked).
 * Each `agent-registry` command of the section runs through the built CLI and prints what the
 * document shows (revision numbers aside).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellCommands } from "../unit/doc-blocks.js";
import { ensureBuilt } from "../harness/cli.js";
import { consoleSteps, expectConsoleStep, sectionBlocks } from "../harness/doc-sections.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const DOC = "docs/trust.md";
const SECTION = "## Deprecation";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

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
    const steps = sectionBlocks(DOC, SECTION).filter((b) => b.lang === "console").flatMap(consoleSteps);
    expect(steps.map((s) => shellCommands(s.command)[0]!.words[1])).toEqual(["deprecate", "lookup", "undeprecate"]);
    for (const step of steps) {
      const args = await expectConsoleStep(DOC, step, env, { writes: shellCommands(step.command)[0]!.words[1] !== "lookup" });
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
