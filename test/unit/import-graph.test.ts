/**
 * The layering of STYLE.md, checked on the import graph itself (eslint checks each file's
 * imports; this follows them): `agent-registry/client` reaches no server module and no server
 * dependency, src/protocol reaches nothing at all, src/kit no service, adapter or front, and
 * the fronts (mcp, audit, ui's server, the CLI's client commands) none of the service's internals.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s*["']([^"']+)["']/g;

/** Every module reachable from `entry` (type-only imports included): files under root, and packages. */
function reach(...entries: string[]): { files: Set<string>; packages: Set<string> } {
  return reachSkipping(new Set(), ...entries);
}

/** As reach, not following the files of `skip` (paths relative to the repository). */
function reachSkipping(skip: ReadonlySet<string>, ...entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const stack = entries.map((e) => resolve(root, e));
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (files.has(file) || skip.has(relative(root, file))) continue;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith(".")) stack.push(resolve(dirname(file), spec).replace(/\.js$/, ".ts"));
      else packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
  }
  return { files: new Set([...files].map((f) => relative(root, f))), packages };
}

describe("import graph", () => {
  it("the SDK (agent-registry/client) reaches only src/client and src/protocol, and only NATS packages", () => {
    const { files, packages } = reach("src/client/index.ts");
    expect(files.size).toBeGreaterThan(5);
    const server = [...files].filter((f) => !f.startsWith("src/client/") && !f.startsWith("src/protocol/"));
    expect(server, "server modules reached from the SDK").toEqual([]);
    const foreign = [...packages].filter((p) => !p.startsWith("@nats-io/") && !p.startsWith("node:"));
    expect(foreign, "non-NATS packages reached from the SDK").toEqual([]);
  });

  it("src/protocol imports nothing outside itself", () => {
    const { files, packages } = reach("src/protocol/index.ts");
    expect([...files].filter((f) => !f.startsWith("src/protocol/"))).toEqual([]);
    expect([...packages]).toEqual([]);
  });

  it("the domain reaches no adapter, service, client or NATS package", () => {
    const domain = readdirSync(resolve(root, "src/domain"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(domain.length).toBeGreaterThan(20);
    const { files, packages } = reach(...domain.map((f) => `src/domain/${f}`));
    for (const f of [...files]) expect(f).toMatch(/^src\/(domain|protocol)\//);
    expect([...packages].filter((p) => p.startsWith("@nats-io/") || p.startsWith("node:") || p === "pino" || p === "prom-client")).toEqual([]);
  });

  it("src/kit (what server and fronts share) reaches only itself, src/protocol and src/domain", () => {
    const kit = readdirSync(resolve(root, "src/kit"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    expect(kit.length).toBeGreaterThan(0);
    const { files } = reach(...kit.map((f) => `src/kit/${f}`));
    expect([...files].filter((f) => !/^src\/(kit|protocol|domain)\//.test(f))).toEqual([]);
  });

  it("the domain's model floor (domain/model) is what graph, schemas, lifecycle and sbom build on: none of them reaches up into domain/view", () => {
    const below = ["model", "graph", "schemas", "lifecycle", "sbom"].flatMap((d) =>
      readdirSync(resolve(root, "src/domain", d), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts"))
        .map((f) => `src/domain/${d}/${f}`),
    );
    expect(below.length).toBeGreaterThan(20);
    const { files } = reach(...below);
    expect([...files].filter((f) => f.startsWith("src/domain/view/"))).toEqual([]);
  });

  it("the fronts reach no service, adapter or composition-root module", () => {
    // `agent-registry serve` is the CLI's one door into the service: main.ts, loaded only for it.
    const entries = ["src/mcp/run.ts", "src/audit/run.ts", "src/ui/server/ui-server.ts", "src/discovery/http-server.ts", "src/cli/main.ts"];
    const { files } = reachSkipping(new Set(["src/cli/serve.ts"]), ...entries);
    for (const entry of entries) expect(files.has(entry), entry).toBe(true);
    expect([...files].filter((f) => /^src\/(service|adapters|start)\//.test(f) || f === "src/main.ts")).toEqual([]);
  });

  it("the web page's browser code reaches only itself, src/ui/shared.ts, src/ui/liveness.ts and protocol types, and of packages only the two it bundles", () => {
    const { files, packages } = reach("src/ui/web/main.ts");
    expect(files.size).toBeGreaterThan(5);
    expect([...files].filter((f) => !f.startsWith("src/ui/web/") && f !== "src/ui/shared.ts" && f !== "src/ui/liveness.ts" && !f.startsWith("src/protocol/"))).toEqual([]);
    // elkjs (the graph's layout, bundled into layout.js, loaded on demand) and uPlot (the charts): devDependencies esbuild bundles.
    expect([...packages].filter((p) => p !== "elkjs" && p !== "uplot")).toEqual([]);
  });

  it("the discovery front reaches the SDK, the kit and the config tables, never the service or the adapters", () => {
    const { files } = reach("src/cli/commands/discovery.ts", "src/discovery/http-server.ts");
    expect(files.size).toBeGreaterThan(5);
    expect([...files].filter((f) => f.startsWith("src/service/") || f.startsWith("src/adapters/") || f.startsWith("src/mcp/"))).toEqual([]);
  });
});
