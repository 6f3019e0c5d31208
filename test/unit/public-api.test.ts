/**
 * The package's public surface: every path package.json exports (and its bin) is built from a
 * source file that exists, and the embedding API builds a registry without binding anything.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as api from "../../src/index.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  exports: Record<string, { types: string; default: string }>;
  bin: Record<string, string>;
};
/** `./dist/client/index.js` (or `.d.ts`) is emitted from `src/client/index.ts` by tsconfig.build.json. */
const sourceOf = (built: string) => built.replace(/^\.?\/?dist\//, "src/").replace(/\.d\.ts$|\.js$/, ".ts");
const exists = (rel: string) => existsSync(new URL(`../../${rel}`, import.meta.url));

describe("package.json", () => {
  const targets = [...Object.values(pkg.exports).flatMap((e) => [e.types, e.default]), ...Object.values(pkg.bin)];
  it.each(targets)("%s is built from a source file that exists", (target) => {
    expect(target).toMatch(/^\.?\/?dist\//);
    expect(exists(sourceOf(target)), sourceOf(target)).toBe(true);
  });
});

describe("the embedding API (agent-registry)", () => {
  it("exports createRegistry, loadConfig and the lifecycle states", () => {
    expect(typeof api.createRegistry).toBe("function");
    expect(typeof api.loadConfig).toBe("function");
    expect(api.RegistryState.Running).toBe("running");
    expect(api.ERROR_CATALOGUE.not_found.status).toBe(404);
  });

  it("builds a registry that binds nothing until start()", async () => {
    const registry = api.createRegistry({ config: api.loadConfig({}, {}, { httpPort: 0, logLevel: "silent" }) });
    expect(registry.state).toBe("created");
    expect(registry.httpPort).toBeUndefined();
    expect(registry.health()).toMatchObject({ live: true, ready: false });
    await registry.stop("never started");
    expect(registry.state).toBe("stopped");
  });
});
