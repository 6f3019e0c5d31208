/**
 * The registry runs in the benchmarks the way it runs in production: compiled JavaScript
 * started by node, not TypeScript through the tsx loader (which added about 20 MB of RSS
 * and 0.4 s to every start in the first runs). Each run compiles src/ into
 * bench/.build/dist, leaving the project's own dist/ alone. With a git ref, it compiles the
 * src/ of that commit instead, to measure a before and an after in the same conditions.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./processes.js";

export const BUILD_DIR = join(ROOT, "bench/.build");
export const REGISTRY_MAIN = join(BUILD_DIR, "dist/cli/main.js");

export async function buildRegistry(ref?: string): Promise<{ seconds: number; warnings: string }> {
  const started = performance.now();
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(BUILD_DIR, { recursive: true });
  // The tree of `ref` goes inside the project, so its imports resolve to the same node_modules.
  const source = ref ? join(BUILD_DIR, "ref") : ROOT;
  if (ref) {
    mkdirSync(source);
    const tar = await run("git", ["archive", "--format=tar", "-o", join(BUILD_DIR, "ref.tar"), ref, "src", "tsconfig.json", "tsconfig.build.json"], ROOT);
    if (tar.failed) throw new Error(`git archive ${ref} failed:\n${tar.output}`);
    const untar = await run("tar", ["-xf", join(BUILD_DIR, "ref.tar"), "-C", source], ROOT);
    if (untar.failed) throw new Error(`unpacking ${ref} failed:\n${untar.output}`);
  }
  // packageVersion() reads ../package.json next to the compiled tree; "type" keeps it ESM.
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };
  writeFileSync(join(BUILD_DIR, "package.json"), JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true }) + "\n");
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  const args = [tsc, "-p", "tsconfig.build.json", "--outDir", join(BUILD_DIR, "dist"), "--declaration", "false", "--sourceMap", "false"];
  // Type errors still emit JavaScript; they are reported, and only a missing entry point fails.
  const { output: warnings } = await run(process.execPath, args, source);
  if (!existsSync(REGISTRY_MAIN)) throw new Error(`compiling src/ did not produce ${REGISTRY_MAIN}:\n${warnings}`);
  return { seconds: (performance.now() - started) / 1000, warnings };
}

function run(command: string, args: string[], cwd: string): Promise<{ failed: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, maxBuffer: 16 * 2 ** 20 }, (err, stdout, stderr) => resolve({ failed: err !== null, output: `${stdout}${stderr}`.trim() }));
  });
}
