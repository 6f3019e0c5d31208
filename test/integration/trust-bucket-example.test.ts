/**
 * docs/trust.md's worked example of trust roots in the bucket, on a real registry: the section's
 * shell block makes globex's key and entry, each `agent-registry trust` command runs through the
 * built CLI and prints what the document shows (revision numbers aside; the delete names the
 * revision `get` printed), and in between the registry does what the text says: the stored
 * event is the one shown, a spec signed with globex's key is stored verified and an unsigned one
 * refused, and after the delete the spec is unverified (`mode_off`).
 */
import { spawnSync } from "node:child_process";
import { createPrivateKey, sign } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import canonicalize from "canonicalize";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellCommands } from "../unit/doc-blocks.js";
import { consoleSteps, sectionBlocks, withoutNumbers } from "../harness/doc-sections.js";
import { ensureBuilt, runCli } from "../harness/cli.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const DOC = "docs/trust.md";
const SECTION = "### Worked example: a tenant's roots set over NATS";

let dir: string;
let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;

const globexSpec = spec("globex-search", { tenant_scope: "globex" });
function signedBody(): Record<string, unknown> {
  const prot = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: "globex-2026" })).toString("base64url");
  const input = `${prot}.${Buffer.from(canonicalize(globexSpec)!).toString("base64url")}`;
  const signature = sign(null, Buffer.from(input), createPrivateKey(readFileSync(join(dir, "globex-signer.pem")))).toString("base64url");
  return { spec: globexSpec, signature: { protected: prot, signature }, heartbeat_interval_ms: 600_000 };
}
const trustOf = async () => (await c.request("tenant.globex.get", { agent_type: "globex-search" })).body.agent?.trust;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trust-bucket-example-"));
  for (const b of sectionBlocks(DOC, SECTION).filter((b) => b.lang === "sh")) {
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", b.code], { cwd: dir, encoding: "utf8" });
    expect(run.status, `${DOC}:${b.line}: ${run.stderr}`).toBe(0);
  }
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
}, 60_000);

afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/trust.md, globex's roots set over NATS", () => {
  it("runs the section's commands, and the registry does what the text says", { timeout: 180_000 }, async () => {
    const blocks = sectionBlocks(DOC, SECTION);
    await ensureBuilt();
    const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
    const steps = blocks.filter((b) => b.lang === "console").flatMap(consoleSteps);
    expect(steps.map((s) => shellCommands(s.command)[0]!.words.slice(1, 3).join(" "))).toEqual(["trust set", "trust get", "trust delete"]);
    let revision = 0;
    for (const step of steps) {
      const [bin, ...words] = shellCommands(step.command)[0]!.words;
      expect(bin).toBe("agent-registry");
      // A file the shell block wrote is in the example's directory; the delete names the revision get printed.
      const args = words.map((w, i) => (existsSync(join(dir, w)) ? join(dir, w) : words[i - 1] === "--revision" && words[1] === "delete" ? String(revision) : w));
      if (words[1] === "delete") await mayDelete();
      const out = await runCli(args, env);
      expect(out.code, `${DOC}:${step.line}: ${out.stderr}`).toBe(0);
      expect(withoutNumbers(out.stdout, { dashed: "kept" }), `${DOC}:${step.line}: ${step.command}`).toBe(withoutNumbers(step.output, { dashed: "kept" }));
      if (words[1] === "set") revision = Number(/\(revision (\d+)\)/.exec(out.stdout)![1]);
    }
    await waitFor(async () => (await trustOf())?.verified === false, { timeoutMs: 20_000, message: "the spec did not turn unverified after the delete" });
    expect(await trustOf()).toMatchObject({ verified: false, lapse: { state: "unverified", reason: "mode_off" } });
  });
});

/** Between get and delete: the event shown is stored, and globex's registrations are judged by the bucket's roots. */
async function mayDelete(): Promise<void> {
  const shown = JSON.parse(sectionBlocks(DOC, SECTION).find((b) => b.lang === "json")!.code) as Record<string, unknown>;
  await waitFor(async () => (await readStoredEvents(c.nc, configOf(reg).eventsStream)).some((e) => e.event.type === "registry.trust.roots_changed"), { timeoutMs: 10_000 });
  const stored = (await readStoredEvents(c.nc, configOf(reg).eventsStream)).filter((e) => e.event.type === "registry.trust.roots_changed").map((e) => e.event.data);
  expect(stored.map((d) => ({ ...d, revision: 0 }))).toEqual([{ ...shown, revision: 0 }]);
  // The replica follows the bucket's roots moments after the write: an unsigned spec is refused once it does.
  await waitFor(async () => (await c.request("tenant.globex.register.globex-search", { spec: globexSpec })).body.error?.issues?.[0]?.message?.startsWith("signature_required"), {
    timeoutMs: 10_000,
    message: "globex's registrations are not judged by the bucket's roots",
  });
  const r = await c.request("tenant.globex.register.globex-search", signedBody());
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  await waitFor(async () => (await trustOf())?.verified === true);
  expect(await trustOf()).toMatchObject({ verified: true, kid: "globex-2026", publisher: "Globex Inc" });
}
