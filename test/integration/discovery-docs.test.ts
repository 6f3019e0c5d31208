/**
 * Every curl example of docs/discovery.md, run with the real curl against a real registry
 * and discovery front: each prints JSON, and is an answer unless the comment before it says
 * which error it shows (`# answers 400 INVALID_ARGUMENT`; under /v0.1, the MCP Registry API's
 * `{"error"}`, which names no code).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDiscoveryFleet, type DiscoveryFleet } from "../harness/discovery.js";

const run = promisify(execFile);
const DOC_BASE = "http://localhost:8090";

type Example = { command: string; error: string | undefined };

function curlExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  for (const block of markdown.split("```sh\n").slice(1).map((b) => b.split("```")[0]!)) {
    let error: string | undefined;
    for (const line of block.split("\n")) {
      const expected = /^# answers \d{3} ([A-Z_]+)$/.exec(line);
      if (expected) error = expected[1];
      else if (line.startsWith("curl ")) {
        examples.push({ command: line, error });
        error = undefined;
      }
    }
  }
  return examples;
}

const examples = curlExamples(readFileSync(new URL("../../docs/discovery.md", import.meta.url), "utf8"));
let fleet: DiscoveryFleet;
let base: string;

beforeAll(async () => {
  fleet = await startDiscoveryFleet();
  base = (await fleet.startFront()).url;
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

describe("docs/discovery.md curl examples", () => {
  it("has the examples this test runs", () => {
    expect(examples.length).toBeGreaterThanOrEqual(8);
    expect(examples.every((e) => e.command.includes(DOC_BASE))).toBe(true);
  });

  it.each(examples.map((e) => [e.command, e] as const))("%s", async (_command, example) => {
    const { stdout } = await run("sh", ["-c", example.command.replaceAll(DOC_BASE, base)], { timeout: 10_000 });
    const body = JSON.parse(stdout) as Record<string, unknown>;
    if (example.command.includes("/v0.1/")) {
      // The MCP Registry API's errors are `{"error"}`, with no code to compare.
      if (example.error === undefined) expect(body.error, stdout).toBeUndefined();
      else expect(typeof body.error, stdout).toBe("string");
      if (example.error === undefined && example.command.includes("/v0.1/servers?")) expect((body.servers as unknown[]).length, stdout).toBeGreaterThan(0);
    } else if (example.error === undefined) expect(body.errorCode, stdout).toBeUndefined();
    else expect(body.errorCode).toBe(example.error);
    if (example.command.includes("/search")) expect(example.error !== undefined || (Array.isArray(body.results) && body.results.length > 0), stdout).toBe(true);
  });
});
