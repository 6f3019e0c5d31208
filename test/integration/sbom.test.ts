/**
 * The `sbom` op (PROTOCOL.md section 11.2) through NATS, the SDK and the CLI: the fleet's SBOM,
 * or one agent's dependency closure's, as CycloneDX 1.6 (default) or SPDX 2.3 JSON, valid
 * against the formats' official schemas (test/fixtures/sbom), with unique references, every
 * dependency resolving, MCP servers as services with their tools nested, model providers as
 * machine-learning-model components; a document that outgrows a reply is refused, not cut.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ajv, type ValidateFunction } from "ajv";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, LimitExceededError, NotFoundError, RegistryClient } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli } from "../harness/cli.js";

const schema = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/sbom/${name}`, import.meta.url), "utf8")) as Record<string, unknown>;

/** The official schemas, compiled once (draft-07; formats unchecked, see the fixtures' README). */
function validators(): { cyclonedx: ValidateFunction; spdx: ValidateFunction } {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(schema("spdx.schema.json"), "spdx.schema.json");
  ajv.addSchema(schema("jsf-0.82.schema.json"), "jsf-0.82.schema.json");
  return { cyclonedx: ajv.compile(schema("bom-1.6.schema.json")), spdx: ajv.compile(schema("spdx-2.3.schema.json")) };
}

let server: NatsTestServer;
let reg: TestRegistry;
let raw: RawClient;
let nc: NatsConnection;
let sdk: RegistryClient;
let check: ReturnType<typeof validators>;

const agent = (name: string, version = "1.0.0") => ({ type: "agent", name, version });

/** The highest store revision a registration here answered: queries pass it as min_revision so
 * that they read a view that has applied every registration before them (the view applies the
 * store's writes asynchronously, so without it a query may miss the last instance registered). */
let registered = 0;

async function register(agentType: string, overrides: Record<string, unknown> = {}) {
  const r = await raw.request(`register.${agentType}`, { spec: spec(agentType, overrides), instance_id: "i1", heartbeat_interval_ms: 3_600_000 });
  expect(r.ok, JSON.stringify(r.body)).toBe(true);
  registered = Math.max(registered, r.body.revision);
}

beforeAll(async () => {
  await ensureBuilt();
  check = validators();
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  raw = await RawClient.connect(server.url, configOf(reg).prefix);
  nc = await connect({ servers: server.url });
  sdk = new RegistryClient(nc, { prefix: configOf(reg).prefix });
  await register("sb-tools", {
    kind: "mcp_server",
    url: "https://tools.example/mcp",
    capabilities: ["fetch", "search"].map((name) => ({ name, description: `${name}es`, input_schema: {}, output_schema: {} })),
  });
  await register("sb-summarizer", {
    version: "2.0.0",
    depends: [{ type: "tool", name: "fetch", version: "1.2.3" }],
    providers: [{ id: "openai", kind: "llm", models: ["gpt-4o", "gpt-4o-mini"] }, { id: "local-embed", kind: "embedding" }],
  });
  await register("sb-writer", { depends: [{ ...agent("sb-summarizer", "2.0.0"), capability: "sb-summarizer.run" }, agent("sb-critic")] });
  await register("sb-alone");
}, 180_000);

afterAll(async () => {
  await nc?.close();
  await raw?.close();
  await reg?.stop();
  await server?.stop();
});

/** Every bom-ref of a CycloneDX document, nested services included. */
function bomRefs(doc: any): string[] {
  const refs: string[] = [];
  const walk = (items: any[] | undefined) => {
    for (const i of items ?? []) {
      refs.push(i["bom-ref"]);
      walk(i.services);
    }
  };
  if (doc.metadata.component) refs.push(doc.metadata.component["bom-ref"]);
  walk(doc.components);
  walk(doc.services);
  return refs;
}

describe("CycloneDX 1.6", () => {
  it("writes one agent's dependency closure, valid against the official schema, every reference resolving", async () => {
    const doc: any = await sdk.sbom({ agent_type: "sb-writer" }, { minRevision: registered });
    expect(check.cyclonedx(doc), JSON.stringify(check.cyclonedx.errors?.slice(0, 5))).toBe(true);
    expect(doc).toMatchObject({ bomFormat: "CycloneDX", specVersion: "1.6", version: 1 });
    // The schema does refuse what breaks it (a validator that accepts anything proves nothing).
    expect(check.cyclonedx({ ...doc, components: [{ name: "no type" }] })).toBe(false);
    expect(doc.serialNumber).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(new Date(doc.metadata.timestamp).toISOString()).toBe(doc.metadata.timestamp);
    expect(doc.revision).toBeUndefined();
    // The agent asked about is the BOM's subject.
    expect(doc.metadata.component).toMatchObject({ type: "application", "bom-ref": "agent:sb-writer@1.0.0", name: "sb-writer", supplier: { name: "team-a" } });
    const refs = bomRefs(doc);
    expect(new Set(refs).size).toBe(refs.length);
    for (const d of doc.dependencies) for (const to of [d.ref, ...d.dependsOn]) expect(refs, to).toContain(to);
    expect(doc.dependencies.map((d: any) => d.ref).sort()).toEqual([...refs].sort());
    // The MCP server is a service with its tools nested; the declared tool depends on the server's tool.
    const tools = doc.services.find((s: any) => s.name === "sb-tools");
    expect(tools).toMatchObject({ "bom-ref": "mcp_server:sb-tools@1.0.0", endpoints: [`nats:agent.tasks.sb-tools`, "https://tools.example/mcp"] });
    expect(tools.services.map((t: any) => t["bom-ref"])).toEqual(["mcp_server:sb-tools@1.0.0/fetch", "mcp_server:sb-tools@1.0.0/search"]);
    const deps = Object.fromEntries(doc.dependencies.map((d: any) => [d.ref, d.dependsOn]));
    expect(deps["agent:sb-writer@1.0.0"]).toEqual(["agent:sb-summarizer@2.0.0", "agent:sb-critic@1.0.0"]);
    expect(deps["tool:fetch@1.2.3"]).toEqual(["mcp_server:sb-tools@1.0.0/fetch"]);
    expect(deps["agent:sb-summarizer@2.0.0"]).toEqual(["model:openai/gpt-4o", "model:openai/gpt-4o-mini", "model:local-embed", "tool:fetch@1.2.3"]);
    // Models are machine-learning-model components; a missing dependency is still listed, with its state.
    expect(doc.components.filter((c: any) => c.type === "machine-learning-model").map((c: any) => c.name)).toEqual(["gpt-4o", "gpt-4o-mini", "local-embed"]);
    const critic = doc.components.find((c: any) => c.name === "sb-critic");
    expect(critic.properties).toContainEqual({ name: "agent-registry:state", value: "missing" });
    expect(refs).not.toContain("agent:sb-alone@1.0.0");
  });

  it("writes the whole fleet when no agent_type is named", async () => {
    const doc: any = await sdk.sbom({}, { minRevision: registered });
    expect(check.cyclonedx(doc), JSON.stringify(check.cyclonedx.errors?.slice(0, 5))).toBe(true);
    expect(doc.metadata.component).toBeUndefined();
    expect(bomRefs(doc)).toEqual(expect.arrayContaining(["agent:sb-alone@1.0.0", "agent:sb-writer@1.0.0", "mcp_server:sb-tools@1.0.0"]));
  });
});

describe("SPDX 2.3", () => {
  it("writes a document valid against the official schema, with DESCRIBES, CONTAINS and DEPENDS_ON", async () => {
    const doc: any = await sdk.sbom({ agent_type: "sb-writer", format: "spdx" }, { minRevision: registered });
    expect(check.spdx(doc), JSON.stringify(check.spdx.errors?.slice(0, 5))).toBe(true);
    expect(doc).toMatchObject({ spdxVersion: "SPDX-2.3", dataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT" });
    expect(check.spdx({ ...doc, packages: [{ name: "no id" }] })).toBe(false);
    expect(doc.creationInfo.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const ids = doc.packages.map((p: any) => p.SPDXID);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^SPDXRef-[A-Za-z0-9.-]+$/);
    for (const r of doc.relationships) for (const id of [r.spdxElementId, r.relatedSpdxElement]) expect([...ids, "SPDXRef-DOCUMENT"]).toContain(id);
    const byId = Object.fromEntries(doc.packages.map((p: any) => [p.SPDXID, p.name]));
    const rel = (type: string) => doc.relationships.filter((r: any) => r.relationshipType === type).map((r: any) => `${byId[r.spdxElementId] ?? "DOCUMENT"} ${byId[r.relatedSpdxElement]}`);
    expect(rel("DESCRIBES")).toEqual(["DOCUMENT sb-writer"]);
    expect(rel("CONTAINS")).toEqual(["sb-tools fetch", "sb-tools search"]);
    expect(rel("DEPENDS_ON")).toEqual(expect.arrayContaining(["sb-writer sb-summarizer", "sb-writer sb-critic", "sb-summarizer gpt-4o", "fetch fetch"]));
  });
});

describe("a dependency chain longer than graph's depth", () => {
  it("lists every agent of the closure, in CycloneDX and SPDX", async () => {
    // 40 agents, each depending on the next: more than twice graph's default depth of 16.
    const chain = Array.from({ length: 40 }, (_, i) => `sb-chain-${i + 1}`);
    for (const [i, type] of chain.entries()) await register(type, i + 1 < chain.length ? { depends: [agent(chain[i + 1]!)] } : {});

    const cdx: any = await sdk.sbom({ agent_type: "sb-chain-1" }, { minRevision: registered });
    expect(check.cyclonedx(cdx), JSON.stringify(check.cyclonedx.errors?.slice(0, 5))).toBe(true);
    expect(cdx.metadata.component.name).toBe("sb-chain-1");
    expect(cdx.components.map((c: any) => c.name)).toEqual(chain.slice(1));
    for (const c of cdx.components) expect(c.properties).toContainEqual({ name: "agent-registry:state", value: "live" });
    const deps = Object.fromEntries(cdx.dependencies.map((d: any) => [d.ref, d.dependsOn]));
    chain.forEach((type, i) => expect(deps[`agent:${type}@1.0.0`]).toEqual(i + 1 < chain.length ? [`agent:${chain[i + 1]}@1.0.0`] : []));

    const spdx: any = await sdk.sbom({ agent_type: "sb-chain-1", format: "spdx" }, { minRevision: registered });
    expect(check.spdx(spdx), JSON.stringify(check.spdx.errors?.slice(0, 5))).toBe(true);
    expect(spdx.packages.map((p: any) => p.name)).toEqual(chain);
    expect(spdx.relationships.filter((r: any) => r.relationshipType === "DEPENDS_ON")).toHaveLength(chain.length - 1);
  });
});

describe("refusals and the CLI", () => {
  it("refuses an unknown agent, a bad format, and a document larger than a reply", async () => {
    await expect(sdk.sbom({ agent_type: "sb-nobody" })).rejects.toBeInstanceOf(NotFoundError);
    expect((await raw.request("sbom", { format: "swid" })).body.error).toMatchObject({ code: "invalid_request", issues: [{ path: "format" }] });
    // A server with a small max_payload: the fleet's document does not fit and is refused, not cut.
    const small = await withNatsServer({ configText: "max_payload: 4096" });
    const smallReg = await startRegistry(small.url);
    const c = await RawClient.connect(small.url, configOf(smallReg).prefix);
    try {
      let revision = 0;
      for (let i = 0; i < 12; i++) {
        const r = await c.request(`register.big-${i}`, { spec: spec(`big-${i}`, { description: "x".repeat(200) }) });
        expect(r.ok, JSON.stringify(r.body)).toBe(true);
        revision = r.body.revision;
      }
      // Read your writes: the fleet's document is refused once the view holds all twelve.
      const refused = await c.request("sbom", { min_revision: revision });
      expect(refused.body.error).toMatchObject({ code: "limit_exceeded" });
      expect(refused.body.error.message).toContain("ask for one agent_type's");
      await expect(new RegistryClient(c.nc, { prefix: configOf(smallReg).prefix }).sbom()).rejects.toBeInstanceOf(LimitExceededError);
      expect((await c.request("sbom", { agent_type: "big-0" })).body).toMatchObject({ bomFormat: "CycloneDX" });
      // One agent's closure is never cut either (it has no depth bound): too large is refused, saying what helps.
      const all = await c.request("register.big-all", { spec: spec("big-all", { depends: Array.from({ length: 12 }, (_, i) => agent(`big-${i}`)) }) });
      expect(all.ok, JSON.stringify(all.body)).toBe(true);
      const one = await c.request("sbom", { agent_type: "big-all", min_revision: all.body.revision });
      expect(one.body.error).toMatchObject({ code: "limit_exceeded" });
      expect(one.body.error.message).toContain("raise the server's max_payload");
    } finally {
      await c.close();
      await smallReg.stop();
      await small.stop();
    }
  });

  it("agent-registry sbom export prints the document, or writes it to a file", async () => {
    const env = { NATS_URL: server.url, REGISTRY_PREFIX: configOf(reg).prefix };
    const out = await runCli(["sbom", "export", "--agent", "sb-writer"], env);
    expect(out.code, out.stderr).toBe(0);
    expect(check.cyclonedx(JSON.parse(out.stdout))).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "sbom-"));
    try {
      const written = await runCli(["sbom", "export", "--format", "spdx", "--output", join(dir, "fleet.spdx.json")], env);
      expect(written).toMatchObject({ code: 0, stdout: "" });
      expect(written.stderr).toContain("wrote an SPDX 2.3 SBOM to");
      expect(check.spdx(JSON.parse(readFileSync(join(dir, "fleet.spdx.json"), "utf8")))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await runCli(["sbom", "export", "--format", "swid"], env)).toMatchObject({ code: 2, stdout: "" });
    // Offline, from the example registry file: no registry asked (no NATS server at that URL).
    const offline = await runCli(["sbom", "export", "--file", "deploy/config/agent-registry.json", "--format", "spdx"], { NATS_URL: "nats://127.0.0.1:1" });
    expect(offline.code, offline.stderr).toBe(0);
    const fileDoc = JSON.parse(offline.stdout);
    expect(check.spdx(fileDoc), JSON.stringify(check.spdx.errors?.slice(0, 5))).toBe(true);
    expect(fileDoc.packages.length).toBeGreaterThan(0);
    // A Registry v2 file (PROTOCOL.md section 11.3) too: its agents, compositions and servers.
    const v2 = await runCli(["sbom", "export", "--file", "test/fixtures/registry-v2/fleet-v2.json", "--agent", "booking-agent"], { NATS_URL: "nats://127.0.0.1:1" });
    expect(v2.code, v2.stderr).toBe(0);
    const v2Doc = JSON.parse(v2.stdout);
    expect(check.cyclonedx(v2Doc), JSON.stringify(check.cyclonedx.errors?.slice(0, 5))).toBe(true);
    expect(v2Doc.metadata.component.name).toBe("booking-agent");
    expect(JSON.stringify(v2Doc)).toContain("mcp_server:seat-service@1.0.0");
    expect(await runCli(["sbom", "export", "--file", "deploy/config/agent-registry.json", "--agent", "nobody"], {})).toMatchObject({ code: 2, stdout: "" });
    expect(await runCli(["sbom"], env)).toMatchObject({ code: 2, stdout: "" });
  });
});
