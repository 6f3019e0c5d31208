/**
 * Spec versions are immutable (PROTOCOL.md section 9), through NATS: another spec under a
 * stored version is 409 `conflict` naming what differs; `"replace": true` overwrites it, is
 * logged, and the stored registered event says `replaced`; a registry file may change an
 * entry under the same version (the file is the operator's); a higher version replaces.
 * The SDK's `replace` option and the CLI's `register --replace` send it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { ConflictError, registerAgent, type AgentSpecInput } from "../../src/client/index.js";
import { main } from "../../src/cli/main.js";
import { ExitCode, type CliIo } from "../../src/cli/context.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let dir: string;
let file: string;

/** A registry file of one entry whose card says `description`, at version 1.0.0. */
function writeRegistryFile(description: string): void {
  const card = { name: "filed", description, version: "1.0.0", skills: [{ id: "filed.run", name: "Run", description: "runs" }] };
  writeFileSync(file, JSON.stringify({ agents: [{ card, queueSubject: "agent.tasks.filed", runtime: "node" }] }));
}

/** The data of the stored registered events of an agent type, once the one of `revision` is stored. */
async function registeredEvents(agentType: string, revision: number): Promise<any[]> {
  const stream = configOf(reg).eventsStream;
  const mine = async () =>
    (await readStoredEvents(c.nc, stream)).map((e) => e.event).filter((e) => e.type === "registry.agent.registered" && e.subject === agentType);
  await waitFor(async () => (await mine()).some((e) => e.data.revision === revision), { message: `registered event of revision ${revision} stored` });
  return (await mine()).map((e) => e.data);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "spec-versions-"));
  file = join(dir, "agent-registry.json");
  writeRegistryFile("filed agent");
  server = await withNatsServer();
  reg = await startRegistry(server.url, { registryFile: file });
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  await waitFor(() => reg.isEvictor, { message: "the replica publishes events" });
});
afterAll(async () => {
  await c?.close();
  await reg?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("the same version with another spec", () => {
  it("is refused with 409 conflict naming the fields and capabilities that differ; nothing is stored", async () => {
    const first = await c.request("register.imm-a", { spec: spec("imm-a"), instance_id: "one" });
    expect(first.ok).toBe(true);
    const other = spec("imm-a", {
      description: "edited without a version bump",
      capabilities: [{ name: "imm-a.other", description: "new", input_schema: {}, output_schema: {} }],
    });
    const r = await c.request("register.imm-a", { spec: other, instance_id: "two" });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("conflict");
    expect(r.body.error.message).toContain("imm-a 1.0.0 is already registered with another spec");
    expect(r.body.error.message).toContain("differs in: description, capabilities (added: imm-a.other; removed: imm-a.run)");
    expect(r.msg.headers?.get("Nats-Service-Error")).toContain("description");
    const got = await c.request("get", { agent_type: "imm-a" });
    expect(got.body.agent.description).toBe("imm-a agent");
    expect(got.body.agent.instances.map((i: any) => i.instance_id)).toEqual(["one"]);
  });

  it("stays idempotent when the spec is the same, whatever the order of its keys", async () => {
    const before = await c.request("get", { agent_type: "imm-a" });
    const reordered = Object.fromEntries(Object.entries(spec("imm-a")).reverse());
    const again = await c.request("register.imm-a", { spec: reordered, instance_id: "one" });
    expect(again.ok).toBe(true);
    const after = await c.request("get", { agent_type: "imm-a", min_revision: again.body.revision });
    // The spec record was not written again.
    expect(after.body.agent.revision).toBe(before.body.agent.revision);
  });

  it("is overwritten with replace: logged, and the stored event says replaced", async () => {
    const replaced = await c.request("register.imm-a", { spec: spec("imm-a", { description: "deliberately replaced" }), instance_id: "two", replace: true });
    expect(replaced.ok).toBe(true);
    const got = await c.request("get", { agent_type: "imm-a", min_revision: replaced.body.revision });
    expect(got.body.agent.description).toBe("deliberately replaced");
    const events = await registeredEvents("imm-a", replaced.body.revision);
    expect(events.find((d) => d.revision === replaced.body.revision)).toMatchObject({ instance_id: "two", version: "1.0.0", spec_changed: true, replaced: true, first_instance: false });
    expect(events.find((d) => d.instance_id === "one")).toMatchObject({ spec_changed: true, replaced: false });
    const warning = reg.logs.find((l) => l.msg === "spec of an existing version overwritten with replace");
    expect(warning).toMatchObject({ level: 40, component: "registrar", agent_type: "imm-a", version: "1.0.0", instance_id: "two" });
  });

  it("shows an overwrite by a live instance as a registered event of its own", async () => {
    const r = await c.request("register.imm-a", { spec: spec("imm-a", { description: "replaced once more" }), instance_id: "one", replace: true });
    expect(r.ok).toBe(true);
    const events = await registeredEvents("imm-a", r.body.revision);
    expect(events.find((d) => d.revision === r.body.revision)).toMatchObject({ instance_id: "one", first_instance: false, spec_changed: true, replaced: true });
  });

  it("is no conflict under a higher version, which replaces as before", async () => {
    const r = await c.request("register.imm-a", { spec: spec("imm-a", { version: "1.1.0", description: "next version" }), instance_id: "one" });
    expect(r.ok).toBe(true);
    const got = await c.request("get", { agent_type: "imm-a", min_revision: r.body.revision });
    expect(got.body.agent).toMatchObject({ version: "1.1.0", description: "next version" });
  });
});

describe("registry-file entries", () => {
  it("take a card changed without a version bump, with a replaced event", async () => {
    await waitFor(() => reg.view.get("filed")?.status === "ready", { message: "file loaded" });
    writeRegistryFile("filed agent, edited in place");
    await waitFor(() => reg.view.get("filed")?.spec.description === "filed agent, edited in place", { timeoutMs: 8000, message: "reload applied" });
    const revision = reg.view.get("filed")!.instances.get("static")!.revision;
    const events = await registeredEvents("filed", revision);
    expect(events.at(-1)).toMatchObject({ instance_id: "static", version: "1.0.0", spec_changed: true, replaced: true });
    expect(reg.logs.some((l) => l.msg === "spec of an existing version overwritten by the registry file" && l["agent_type"] === "filed")).toBe(true);
    expect((await reg.metrics.registryFileErrors.get()).values[0]?.value ?? 0).toBe(0);
  });
});

/** The CLI in this process, interrupted (as by Ctrl-C) once it printed its registration. */
async function cliRegister(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  let interrupt: (signal: string) => void = () => {};
  const interrupted = new Promise<string>((resolve) => (interrupt = resolve));
  const io: CliIo = {
    stdout: (t) => {
      out.push(t);
      if (t.startsWith("registered")) interrupt("SIGINT");
    },
    stderr: (t) => void err.push(t),
    env: {},
    isTTY: false,
    interrupted: () => interrupted,
  };
  const code = await main(["register", ...args, "--nats", server.url, "--prefix", configOf(reg).prefix], io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("the SDK and the CLI", () => {
  it("registerAgent rejects another spec of a stored version with ConflictError, and overwrites it with replace", async () => {
    expect((await c.request("register.imm-sdk", { spec: spec("imm-sdk") })).ok).toBe(true);
    const nc = await connect({ servers: server.url });
    try {
      const edited = spec("imm-sdk", { description: "edited" }) as unknown as AgentSpecInput;
      const refused = await registerAgent(nc, edited, { prefix: configOf(reg).prefix }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as Error).message).toContain("differs in: description");
      const handle = await registerAgent(nc, edited, { prefix: configOf(reg).prefix, replace: true });
      const got = await c.request("get", { agent_type: "imm-sdk", min_revision: handle.registration.revision });
      expect(got.body.agent.description).toBe("edited");
      await handle.close();
    } finally {
      await nc.close();
    }
  });

  it("register exits 1 on the conflict and overwrites with --replace", async () => {
    expect((await c.request("register.imm-cli", { spec: spec("imm-cli") })).ok).toBe(true);
    const path = join(dir, "imm-cli.json");
    writeFileSync(path, JSON.stringify(spec("imm-cli", { description: "edited in the file" })));
    const refused = await cliRegister([path]);
    expect(refused.code).toBe(ExitCode.Error);
    expect(refused.stderr).toMatch(/^error: conflict: imm-cli 1\.0\.0 is already registered with another spec \(differs in: description\)/);
    const replaced = await cliRegister([path, "--replace"]);
    expect(replaced.code, replaced.stderr).toBe(ExitCode.Ok);
    expect(replaced.stdout).toMatch(/^registered imm-cli 1\.0\.0 as instance /);
    // Read your writes: the registration's revision, from the line the CLI printed.
    const revision = Number(/, revision (\d+)/.exec(replaced.stdout)![1]);
    expect((await c.request("get", { agent_type: "imm-cli", min_revision: revision })).body.agent.description).toBe("edited in the file");
  });
});

