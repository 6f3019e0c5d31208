/**
 * `npm run build` (which `npm start` runs first) is incremental: a second build of an unchanged
 * tree writes nothing, a changed source re-emits only what it affects, and a deleted dist/ is
 * built again in full because the build info lives inside it. Checked on what the build leaves
 * in dist/ (files and their mtimes), never on how long it took, in a copy of the project so
 * the real dist/ of the CLI tests is left alone.
 */
import { execFile } from "node:child_process";
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ROOT } from "../harness/cli.js";

const work = mkdtempSync(join(tmpdir(), "agent-registry-build-"));
const dist = join(work, "dist");

function build(): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("npm", ["run", "build"], { cwd: work }, (err, stdout, stderr) =>
      err ? reject(new Error(`npm run build failed:\n${stdout}\n${stderr}`)) : resolve(),
    );
  });
}

/** Every file under dist/ with its mtime (ns precision, so a rewrite in the same ms still shows). */
function snapshot(dir = dist): Map<string, bigint> {
  const files = new Map<string, bigint>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dist, path), statSync(path, { bigint: true }).mtimeNs);
  }
  return files;
}

function changed(before: Map<string, bigint>, after: Map<string, bigint>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((n) => before.get(n) !== after.get(n)).sort();
}

let first: Map<string, bigint>;

beforeAll(async () => {
  for (const f of ["src", "package.json", "tsconfig.json", "tsconfig.build.json"]) cpSync(join(ROOT, f), join(work, f), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(work, "node_modules"), "dir");
  await build();
  first = snapshot();
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

it("builds a clean tree in full, with the build info inside dist/", () => {
  expect(first.has("cli/main.js")).toBe(true);
  expect(first.has("client/index.d.ts")).toBe(true);
  expect(first.has(".tsbuildinfo")).toBe(true);
  // The browser code (src/ui/web) is bundled into dist/ui/public by esbuild, not compiled file by file.
  const sources = readdirSync(join(work, "src"), { recursive: true }).map(String).filter((f) => f.endsWith(".ts") && !f.startsWith("ui/web/"));
  for (const page of ["ui/public/index.html", "ui/public/app.js", "ui/public/style.css"]) expect(first.has(page)).toBe(true);
  for (const source of sources) expect(first.has(source.replace(/\.ts$/, ".js"))).toBe(true);
  // Nothing outside dist/ remembers the build, so deleting dist/ forgets it.
  const outside = readdirSync(work, { recursive: true }).map(String).filter((f) => f.endsWith(".tsbuildinfo") && !f.startsWith("node_modules"));
  expect(outside).toEqual(["dist/.tsbuildinfo"]);
});

it("writes nothing when the tree has not changed", async () => {
  await build();
  expect(changed(first, snapshot())).toEqual([]);
}, 120_000);

it("re-emits only what a changed source affects", async () => {
  appendFileSync(join(work, "src", "version.ts"), "\n// an edit that changes no types\n");
  await build();
  const rewritten = changed(first, snapshot());
  expect(rewritten).toContain("version.js");
  expect(rewritten).toContain(".tsbuildinfo");
  expect(rewritten).not.toContain("cli/main.js");
  expect(rewritten.length).toBeLessThan(first.size / 4);
}, 120_000);

it("builds a deleted dist/ again in full", async () => {
  rmSync(dist, { recursive: true });
  await build();
  expect([...snapshot().keys()].sort()).toEqual([...first.keys()].sort());
}, 120_000);
