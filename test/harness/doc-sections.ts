/**
 * A worked example in docs/, read the way the example tests run it: the code blocks of one
 * section, each `$ command` of a console block with what it prints, and the comparison that
 * lets a run's numbers differ from the document's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { extractBlocks, shellCommands, type DocBlock } from "../unit/doc-blocks.js";
import { runCli } from "./cli.js";
import { waitFor } from "./wait.js";

const root = new URL("../../", import.meta.url).pathname;

/** The blocks of `doc` under the heading line `heading`, up to the next `## ` heading, in order. */
export function sectionBlocks(doc: string, heading: string): DocBlock[] {
  const text = readFileSync(join(root, doc), "utf8");
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l === heading) + 1;
  expect(from, `${doc} has no line "${heading}"`).toBeGreaterThan(0);
  const to = lines.findIndex((l, i) => i >= from && l.startsWith("## ")) + 1;
  return extractBlocks(doc, text).filter((b) => b.line > from && (to === 0 || b.line < to));
}

export type ConsoleStep = { command: string; output: string; line: number };

/** Each `$ command` of a console block with the lines it prints, and the document line it is on. */
export function consoleSteps(block: DocBlock): ConsoleStep[] {
  const steps: Array<{ command: string; output: string[]; line: number }> = [];
  block.code.split("\n").forEach((l, i) => {
    if (l.startsWith("$ ")) steps.push({ command: l.slice(2), output: [], line: block.line + 1 + i });
    else steps.at(-1)?.output.push(l);
  });
  return steps.map((s) => ({ ...s, output: s.output.join("\n").trim() }));
}

/**
 * The text with numbers standing alone (revisions, counts) as N and whitespace runs as one
 * space: what one run may change against the document. `dashed: "kept"` leaves numbers joined
 * by a dash (a date, a key id such as globex-2026) as they are.
 */
export function withoutNumbers(text: string, options: { dashed?: "kept" } = {}): string {
  const standalone = options.dashed === "kept" ? /(?<![\d.-])\d+(?![\d.-])/g : /(?<![\d.])\d+(?![\d.])/g;
  return text.trim().replace(standalone, "N").replace(/[ \t]+/g, " ");
}

/**
 * Runs one documented `agent-registry ...` step through the built CLI (ensureBuilt first) and
 * expects what the document prints, numbers aside. A step that `writes` runs once; a read is
 * retried for up to 10 s, since it may reach a view that has not applied the last write yet.
 * Returns the step's arguments.
 */
export async function expectConsoleStep(doc: string, step: ConsoleStep, env: Record<string, string>, { writes }: { writes: boolean }): Promise<string[]> {
  const [bin, ...args] = shellCommands(step.command)[0]!.words;
  expect(bin).toBe("agent-registry");
  let last = "";
  await waitFor(
    async () => {
      const out = await runCli(args, env);
      expect(out.code, `${doc}:${step.line}: ${out.stderr}`).toBe(0);
      last = out.stdout;
      return writes || withoutNumbers(out.stdout) === withoutNumbers(step.output);
    },
    { timeoutMs: 10_000, message: `${doc}:${step.line}` },
  );
  expect(withoutNumbers(last), `${doc}:${step.line}: ${step.command}`).toBe(withoutNumbers(step.output));
  return args;
}
