/**
 * Runs the BUILT command line (`node dist/cli/main.js`), as users run it: a fresh process,
 * stdout a pipe (so no colour), the environment given and nothing inherited but PATH/HOME.
 * `ensureBuilt()` runs `npm run build` when dist/ is missing or older than src/, once even
 * when several test files ask at the same time.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitFor } from "./wait.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = join(ROOT, "dist", "cli", "main.js");
// `npm run build` is incremental: it rewrites this file whenever a source changed, but leaves
// the outputs of unaffected sources (cli/main.js among them) as they were.
const BUILD_INFO = join(ROOT, "dist", ".tsbuildinfo");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const builtMtime = (): number => statSync(BUILD_INFO, { throwIfNoEntry: false })?.mtimeMs ?? 0;

const isStale = () => !existsSync(CLI) || builtMtime() < newestMtime(join(ROOT, "src"));

/** Builds dist/ unless it is up to date; a lock directory keeps two test files from building at once. */
export async function ensureBuilt(): Promise<void> {
  if (!isStale()) return;
  const lock = join(tmpdir(), `agent-registry-build-${ROOT.replace(/[^A-Za-z0-9]/g, "_")}.lock`);
  await waitFor(
    () => {
      try {
        mkdirSync(lock);
        return true;
      } catch {
        // Held by a build that died? Take it over after two minutes.
        if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 120_000) rmdirSync(lock);
        return false;
      }
    },
    { timeoutMs: 180_000, intervalMs: 200, message: "the build lock" },
  );
  try {
    if (!isStale()) return; // built by whoever held the lock
    await new Promise<void>((resolve, reject) => {
      execFile("npm", ["run", "build"], { cwd: ROOT }, (err, stdout, stderr) =>
        err ? reject(new Error(`npm run build failed:\n${stdout}\n${stderr}`)) : resolve(),
      );
    });
  } finally {
    rmdirSync(lock);
  }
}

export type CliResult = { code: number | null; stdout: string; stderr: string };

const baseEnv = (env: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env });

/** Runs one command to its end. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 20_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: baseEnv(env), timeout: timeoutMs }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running command (register, watch): its output so far, and a way to stop it. */
export type CliProcess = {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  lines(): string[];
  /** Waits until stdout has a line matching `re`, and returns it. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  readonly exited: Promise<number | null>;
};

export function spawnCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines = () => out.split("\n").filter((l) => l !== "");
  const proc: CliProcess = {
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    lines,
    async waitForLine(re, timeoutMs = 10_000) {
      const found = () => lines().find((l) => re.test(l));
      const deadline = Date.now() + timeoutMs;
      let exitedAt: number | undefined;
      while (found() === undefined) {
        // Output can trail the exit event a little: give it 200 ms to arrive before failing.
        if (exitedAt === undefined && (child.exitCode !== null || child.signalCode !== null)) exitedAt = Date.now();
        if (Date.now() > deadline || (exitedAt !== undefined && Date.now() - exitedAt > 200)) {
          const why = exitedAt !== undefined ? `exited with ${child.exitCode ?? child.signalCode}` : `nothing after ${timeoutMs} ms`;
          throw new Error(`no line matching ${re}: ${why}\nstdout: ${out}\nstderr: ${err}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return found()!;
    },
    async stop(signal = "SIGINT") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return proc;
}
