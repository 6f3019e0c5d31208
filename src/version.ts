/**
 * The package version, read once from package.json (src/ and dist/ both sit one level below
 * it), for `--version`, the service's start log, its micro-service info and build_info.
 */
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function packageVersion(): string {
  if (cached === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version?: string };
      cached = pkg.version ?? "0.0.0";
    } catch {
      cached = "0.0.0";
    }
  }
  return cached;
}
