/**
 * `kind` and `read_only` through NATS (PROTOCOL.md section 10.2): every lookup provider says its
 * kind; lookup, list, search and discover keep one kind when asked; lookup and search keep the
 * read-only capabilities only (annotations.readOnlyHint true); paging follows the filtered
 * list; a kind that is not one of the three is `invalid_request`. Also through the SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { RegistryClient } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";

let server: NatsTestServer;
let reg: TestRegistry;
let c: RawClient;
let sdkNc: NatsConnection;
let sdk: RegistryClient;
let revision = 0;

const capability = (name: string, readOnlyHint?: boolean) => ({
  name,
  description: `${name.replace(/[._]/g, " ")} files`,
  input_schema: { type: "object" },
  output_schema: {},
  ...(readOnlyHint === undefined ? {} : { annotations: { readOnlyHint } }),
});

/** Two MCP servers, a tool and an agent sharing capability names, with and without readOnlyHint. */
const ENTRIES: Array<[string, Record<string, unknown>]> = [
  ["kf-agent", { capabilities: [capability("kf.read"), capability("kf.shared")] }],
  ["kf-mcp", { kind: "mcp_server", capabilities: [capability("kf.read", true), capability("kf.write", false), capability("kf.shared", true)] }],
  ["kf-mcp2", { kind: "mcp_server", capabilities: [capability("kf.shared", true)] }],
  ["kf-tool", { kind: "tool", capabilities: [capability("kf.read", false), capability("kf.shared")] }],
];

const types = (items: Array<{ agent_type?: string; id?: string }>) => items.map((i) => i.agent_type ?? i.id);

/** Every page of a raw query, following next_cursor; the items of `key` joined. */
async function allPages(op: string, body: Record<string, unknown>, key: string): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await c.request(op, cursor === undefined ? body : { ...body, cursor });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    items.push(...r.body[key]);
    cursor = r.body.next_cursor ?? undefined;
    pages++;
  } while (cursor !== undefined);
  return { items, pages };
}

beforeAll(async () => {
  server = await withNatsServer();
  reg = await startRegistry(server.url);
  c = await RawClient.connect(server.url, configOf(reg).prefix);
  for (const [type, overrides] of ENTRIES) {
    const r = await c.request(`register.${type}`, { spec: spec(type, overrides) });
    expect(r.ok, JSON.stringify(r.body)).toBe(true);
    revision = r.body.revision;
  }
  sdkNc = await connect({ servers: server.url });
  sdk = new RegistryClient(sdkNc, { prefix: configOf(reg).prefix });
  await sdk.get("kf-tool", { minRevision: revision });
});
afterAll(async () => {
  await sdkNc?.close();
  await c?.close();
  await reg?.stop();
  await server?.stop();
});

describe("lookup", () => {
  it("says every provider's kind, and keeps one kind when asked", async () => {
    const all = await c.request("lookup", { capability: "kf.read" });
    expect(Object.fromEntries(all.body.providers.map((p: any) => [p.agent_type, p.kind]))).toEqual({ "kf-agent": "agent", "kf-mcp": "mcp_server", "kf-tool": "tool" });
    expect(types((await c.request("lookup", { capability: "kf.read", kind: "tool" })).body.providers)).toEqual(["kf-tool"]);
    expect(types((await c.request("lookup", { capability: "kf.read", kind: "agent" })).body.providers)).toEqual(["kf-agent"]);
  });

  it("keeps the read-only capabilities only with read_only: true", async () => {
    expect(types((await c.request("lookup", { capability: "kf.read", read_only: true })).body.providers)).toEqual(["kf-mcp"]);
    expect(types((await c.request("lookup", { capability: "kf.write", read_only: true })).body.providers)).toEqual([]);
    expect((await c.request("lookup", { capability: "kf.read", read_only: false })).body.providers).toHaveLength(3);
    expect((await c.request("lookup", { capability: "kf.read", kind: "agent", read_only: true })).body.providers).toEqual([]);
  });

  it("pages through the filtered providers", async () => {
    const byKind = await allPages("lookup", { capability: "kf.shared", kind: "mcp_server", limit: 1 }, "providers");
    expect(byKind.pages).toBe(2);
    expect(types(byKind.items).sort()).toEqual(["kf-mcp", "kf-mcp2"]);
    const readOnly = await allPages("lookup", { capability: "kf.shared", read_only: true, limit: 1 }, "providers");
    expect(types(readOnly.items).sort()).toEqual(["kf-mcp", "kf-mcp2"]);
  });
});

describe("list, search, discover", () => {
  it("list keeps one kind, page after page, and every AgentView says its kind", async () => {
    const { items, pages } = await allPages("list", { kind: "mcp_server", limit: 1 }, "agents");
    expect(types(items)).toEqual(["kf-mcp", "kf-mcp2"]);
    expect(pages).toBe(2);
    expect(items.every((a) => a.kind === "mcp_server")).toBe(true);
    expect(types((await c.request("list", { kind: "agent" })).body.agents)).toEqual(["kf-agent"]);
  });

  it("search keeps one kind, and read-only capabilities only with read_only: true", async () => {
    const all = (await c.request("search", { query: "read shared write files" })).body.results;
    expect(new Set(all.map((r: any) => r.agent_type))).toEqual(new Set(["kf-agent", "kf-mcp", "kf-mcp2", "kf-tool"]));
    const tools = (await c.request("search", { query: "read shared write files", kind: "tool" })).body.results;
    expect(new Set(tools.map((r: any) => r.agent_type))).toEqual(new Set(["kf-tool"]));
    const readOnly = (await c.request("search", { query: "read shared write files", read_only: true })).body.results;
    expect(readOnly.map((r: any) => `${r.agent_type}/${r.capability}`).sort()).toEqual(["kf-mcp/kf.read", "kf-mcp/kf.shared", "kf-mcp2/kf.shared"]);
    // The filter narrows the results; it does not change their scores.
    for (const r of readOnly) expect(all).toContainEqual(r);
  });

  it("discover keeps one kind, page after page, with the capability filter too", async () => {
    const { items, pages } = await allPages("discover", { kind: "mcp_server", limit: 1 }, "agents");
    expect(types(items)).toEqual(["kf-mcp", "kf-mcp2"]);
    expect(pages).toBe(2);
    expect(types((await c.request("discover", { kind: "tool", capability: "kf.read" })).body.agents)).toEqual(["kf-tool"]);
    expect((await c.request("discover", { kind: "tool", capability: "kf.write" })).body.agents).toEqual([]);
  });
});

describe("bad filters", () => {
  it("answer invalid_request for a kind that is not agent, mcp_server or tool, or a read_only that is not a boolean", async () => {
    const bodies: Array<[string, Record<string, unknown>]> = [
      ["lookup", { capability: "kf.read", kind: "robot" }],
      ["list", { kind: "MCP_SERVER" }],
      ["search", { query: "read", kind: "" }],
      ["discover", { kind: 3 }],
      ["lookup", { capability: "kf.read", read_only: "yes" }],
      ["search", { query: "read", read_only: 1 }],
      // Refused at once, before any wait for a far revision.
      ["list", { kind: "robot", min_revision: revision + 1_000_000 }],
    ];
    for (const [op, body] of bodies) {
      const r = await c.request(op, body);
      expect(r.status, `${op} ${JSON.stringify(body)}`).toBe(400);
      expect(r.body.error.code).toBe("invalid_request");
      expect(r.body.error.issues[0].path).toMatch(/^(kind|read_only)$/);
    }
  });
});

describe("the SDK", () => {
  it("sends the filters of lookup, list, search and discover", async () => {
    expect(types((await sdk.lookupAll({ capability: "kf.shared", kind: "mcp_server", limit: 1 })).providers).sort()).toEqual(["kf-mcp", "kf-mcp2"]);
    expect((await sdk.lookup({ capability: "kf.read", read_only: true })).providers).toMatchObject([{ agent_type: "kf-mcp", kind: "mcp_server" }]);
    const listed: string[] = [];
    for await (const a of sdk.listAll({ kind: "tool" })) listed.push(a.agent_type);
    expect(listed).toEqual(["kf-tool"]);
    const found = (await sdk.search({ query: "read", kind: "mcp_server", read_only: true })).results;
    expect(found.map((r) => `${r.agent_type}/${r.capability}`)).toEqual(["kf-mcp/kf.read"]);
    expect((await sdk.discoverAll({ kind: "agent" })).agents.map((a) => a.id)).toEqual(["kf-agent"]);
  });
});
