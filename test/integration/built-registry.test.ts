/**
 * The registry as the installed `agent-registry serve` runs it: compiled JavaScript on node
 * through the file's #! line, no tsx. Worker
 * threads load their entry file differently from source and from dist
 * (adapters/workers/module-worker.ts); every other test runs from source, so this one builds
 * src/ (about 10 s) and checks that the built service compiles schemas and checks payloads
 * in its workers.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, spec } from "../harness/registry.js";
import { metricValue, spawnRegistry, type RegistryProcess } from "../harness/registry-process.js";

const ROOT = new URL("../..", import.meta.url).pathname;
// Inside the project, so the built files resolve the project's node_modules.
const BUILD = join(ROOT, "test/.build", String(process.pid));
const PREFIX = "built.registry";

let server: NatsTestServer;
let proc: RegistryProcess | undefined;

beforeAll(async () => {
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(BUILD, { recursive: true });
  // packageVersion() reads the package.json next to the compiled tree; "type" keeps it ESM.
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string; version: string };
  writeFileSync(join(BUILD, "package.json"), JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true }));
  const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
  await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", join(BUILD, "dist"), "--declaration", "false", "--sourceMap", "false"], { cwd: ROOT });
  server = await withNatsServer();
}, 120_000);

afterAll(async () => {
  await proc?.stop();
  await server?.[Symbol.asyncDispose]();
  rmSync(BUILD, { recursive: true, force: true });
});

it("built with tsc and run as the agent-registry command, compiles capability schemas and checks payloads in its worker threads", { timeout: 60_000 }, async () => {
  // Run as the installed `agent-registry serve` runs: through the #! line, which gives node the
  // service's V8 flags, so the start has nothing to warn about.
  proc = await spawnRegistry("built", { NATS_URL: server.url, REGISTRY_PREFIX: PREFIX, REGISTRY_BUCKET: "built-registry", REGISTRY_EVENTS_STREAM: "BUILT_EVENTS", LOG_LEVEL: "warn" }, { main: join(BUILD, "dist/cli/main.js"), asBin: true });
  expect(proc.logs.filter((l) => l.includes("V8 flags"))).toEqual([]);
  const client = await RawClient.connect(server.url, PREFIX);
  try {
    const input_schema = { type: "object", properties: { q: { type: "string", pattern: "^a*a*a*a*a*a*b$" } }, required: ["q"] };
    const ok = await client.request("register.built", { spec: spec("built", { capabilities: [{ name: "built.run", description: "", input_schema, output_schema: {} }] }) }, 30_000);
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);
    const bad = { type: "object", properties: { q: { type: "string", pattern: "(a)\\1" } } };
    const refused = await client.request("register.refused", { spec: spec("refused", { capabilities: [{ name: "refused.run", description: "", input_schema: bad, output_schema: {} }] }) }, 30_000);
    expect(refused.body.error?.issues?.[0]?.path).toBe("capabilities.0.input_schema.properties.q.pattern");
    expect(metricValue(await proc.metrics(), "agent_registry_schema_workers_lost_total")).toBe(0);
    // Read your writes: the check finds the capability once the view holds the registration.
    const valid = await client.request("check", { capability: "built.run", payload: { q: "aaab" }, min_revision: ok.body.revision }, 30_000);
    expect(valid.body).toMatchObject({ valid: true, agent_type: "built" });
    const invalid = await client.request("check", { capability: "built.run", payload: { q: "aaa" } }, 30_000);
    expect(invalid.body).toMatchObject({ valid: false, errors: [{ path: "payload.q" }] });
    expect(metricValue(await proc.metrics(), "agent_registry_payload_check_workers_lost_total")).toBe(0);
  } finally {
    await client.close();
  }
});
