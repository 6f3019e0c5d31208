/**
 * Go programs a scenario runs (the peers load generator, the pinned etcd server), built from
 * their module folder into a cache outside the repository, keyed by a hash of the folder's
 * sources: a second run reuses the binary, and any change to go.mod, go.sum or a .go file
 * builds anew. The cache is install-nats.sh's (AGENT_REGISTRY_CACHE), so CI keeps it too.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const CACHE = process.env["AGENT_REGISTRY_CACHE"] ?? join(process.env["XDG_CACHE_HOME"] ?? join(homedir(), ".cache"), "agent-registry");

/** The hash of a module folder's own sources (not of its nested modules' folders). */
function sourceHash(dir: string): string {
  const h = createHash("sha256");
  for (const name of readdirSync(dir).sort()) {
    if (name === "go.mod" || name === "go.sum" || name.endsWith(".go")) h.update(name).update("\0").update(readFileSync(join(dir, name))).update("\0");
  }
  return h.digest("hex").slice(0, 16);
}

/** Builds the main package of `dir` as `name` unless the cache holds this source's build; returns its path. */
export async function goBuild(dir: string, name: string): Promise<{ binary: string; built: boolean; seconds: number }> {
  const started = performance.now();
  const target = join(CACHE, "go-builds", `${name}-${sourceHash(dir)}`);
  const binary = join(target, name);
  if (existsSync(binary)) return { binary, built: false, seconds: 0 };
  const partial = `${target}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  // CGO off: a static binary; -mod=readonly: go.sum is the pin, a build never rewrites it.
  const output = await new Promise<string | null>((resolve) => {
    execFile("go", ["build", "-mod=readonly", "-o", join(partial, name), "."], { cwd: dir, env: { ...process.env, CGO_ENABLED: "0" }, maxBuffer: 16 * 2 ** 20 }, (err, stdout, stderr) =>
      resolve(err ? `${err.message}\n${stdout}${stderr}` : null),
    );
  });
  if (output !== null) throw new Error(`go build in ${dir} failed (needs Go 1.26 and the Go module proxy):\n${output.slice(-3000)}`);
  // Renamed into place only once whole, so an interrupted build is never taken as cached.
  rmSync(target, { recursive: true, force: true });
  renameSync(partial, target);
  return { binary, built: true, seconds: (performance.now() - started) / 1000 };
}
