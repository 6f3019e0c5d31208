/**
 * The MCP Registry's generic API on the discovery front (docs/discovery.md, "The MCP Registry
 * API") over real HTTP against a real registry: every reply validates against the official
 * openapi.yaml and server.schema.json (test/fixtures/mcp-registry), paging walks a fleet larger
 * than a page, names invert exactly, and every bad value is a 400 in the spec's `{error}` shape.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { startDiscoveryFleet, type DiscoveryFleet } from "../harness/discovery.js";
import { mcpProblems, mcpRegistrySchemas, serverResponseProblems } from "../harness/mcp-registry-schemas.js";
import { spec } from "../harness/registry.js";

type ServerResponse = { server: { name: string; version: string; description: string; title?: string; remotes?: Array<{ type: string; url: string }> }; _meta: Record<string, { status: string; publishedAt: string; updatedAt: string; isLatest: boolean }> };
type ServerList = { servers: ServerResponse[]; metadata: { count: number; nextCursor?: string } };

const OFFICIAL = "io.modelcontextprotocol.registry/official";
const TOKEN = "mcp-registry-t0ken";
/** The shared MCP servers: the harness's weather and these. */
const EXTRA = ["atlas", "billing", "calendar", "docs-search", "echo"];
/** Registered by the server.json it publishes elsewhere (test/fixtures/cli/weather.server.json, renamed). */
const FROM_SERVER_JSON = "forecast";
const SHARED_NAMES = ["weather", ...EXTRA, FROM_SERVER_JSON].map((t) => `com.example/${t}`).sort();

let fleet: DiscoveryFleet;
let base: string;
let guardedBase: string;
let startedAt: string;

async function getList(url: string): Promise<ServerList> {
  const res = await fetch(url);
  const body = (await res.json()) as ServerList;
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(mcpProblems(mcpRegistrySchemas.serverList, body)).toBe("");
  for (const record of body.servers) expect(serverResponseProblems(record)).toBe("");
  expect(body.metadata.count).toBe(body.servers.length);
  return body;
}

async function expectError(res: Response, status: number, mentions?: string): Promise<void> {
  const body = (await res.json()) as { error: string };
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(mcpProblems(mcpRegistrySchemas.error, body)).toBe("");
  if (mentions !== undefined) expect(body.error).toContain(mentions);
}

beforeAll(async () => {
  fleet = await startDiscoveryFleet();
  startedAt = new Date(Date.now() - 60_000).toISOString();
  const client = new RegistryClient(fleet.nc, { prefix: fleet.prefix });
  let revision = 0;
  const register = async (c: RegistryClient, s: Record<string, unknown>) => {
    revision = Math.max(revision, (await c.register({ spec: s as AgentSpecInput, heartbeat_interval_ms: 3_600_000 })).revision);
  };
  for (const type of EXTRA) {
    const extra: Record<string, unknown> = { kind: "mcp_server", description: `${type} tools`, nats_subject: `mcp.tools.${type}` };
    if (type === "billing") Object.assign(extra, { version: "2.0.0", url: "https://mcp.example.com/billing", display_name: "Billing" });
    if (type === "echo") extra.description = "x".repeat(150);
    await register(client, spec(type, extra));
  }
  const serverJson = JSON.parse(readFileSync(new URL("../fixtures/cli/weather.server.json", import.meta.url), "utf8")) as Record<string, unknown>;
  await client.register({ agent_type: FROM_SERVER_JSON, mcp_server: { ...serverJson, name: `io.example.acme/${FROM_SERVER_JSON}` }, heartbeat_interval_ms: 3_600_000 });
  await register(new RegistryClient(fleet.nc, { prefix: fleet.prefix, tenant: "acme" }), spec("books", { kind: "mcp_server", tenant_scope: "acme", nats_subject: "mcp.tools.books" }));
  // The discovery front sends no min_revision: list the servers only once the view holds them.
  await client.discover({}, { minRevision: revision });
  base = (await fleet.startFront()).url;
  guardedBase = (await fleet.startFront({ token: TOKEN })).url;
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

describe("GET /v0.1/servers", () => {
  it("serves a server registered by its server.json back as one: its title, description, version and remote, under this registry's namespace", async () => {
    const [record] = (await getList(`${base}/v0.1/servers?search=${FROM_SERVER_JSON}`)).servers;
    expect(record?.server).toEqual({
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
      name: `com.example/${FROM_SERVER_JSON}`,
      title: "Weather",
      description: "Forecasts and severe weather alerts for any place on Earth",
      version: "1.4.0",
      remotes: [{ type: "streamable-http", url: "https://weather.example.com/mcp" }],
    });
  });

  it("lists the shared MCP servers as server.json records, and nothing else", async () => {
    const body = await getList(`${base}/v0.1/servers`);
    expect(body.servers.map((s) => s.server.name)).toEqual(SHARED_NAMES);
    expect(body.metadata.nextCursor).toBeUndefined();
    const weather = body.servers.find((s) => s.server.name === "com.example/weather")!;
    expect(weather.server).toMatchObject({ description: "weather data", version: "1.0.0" });
    // Served over NATS only: no URL, so no remotes.
    expect(weather.server.remotes).toBeUndefined();
    const meta = weather._meta[OFFICIAL]!;
    expect(meta).toMatchObject({ status: "active", isLatest: true });
    expect(Date.parse(meta.publishedAt)).toBeGreaterThan(Date.parse(startedAt));
    expect(meta.updatedAt).toBe(meta.publishedAt);
  });

  it("maps an http(s) url to a streamable-http remote, the display name to title, and clips a long description", async () => {
    const body = await getList(`${base}/v0.1/servers?search=billing`);
    expect(body.servers[0]!.server).toMatchObject({ name: "com.example/billing", title: "Billing", version: "2.0.0", remotes: [{ type: "streamable-http", url: "https://mcp.example.com/billing" }] });
    const echo = (await getList(`${base}/v0.1/servers?search=echo`)).servers[0]!;
    expect([...echo.server.description]).toHaveLength(100);
    expect(echo.server.description.endsWith("…")).toBe(true);
  });

  it("pages a fleet larger than a page with limit and cursor", async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = await getList(`${base}/v0.1/servers?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(body.servers.length).toBeLessThanOrEqual(2);
      names.push(...body.servers.map((s) => s.server.name));
      cursor = body.metadata.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(Math.ceil(SHARED_NAMES.length / 2));
    expect(names).toEqual(SHARED_NAMES);
  });

  it("filters by version (latest is every server), search and updated_since", async () => {
    expect((await getList(`${base}/v0.1/servers?version=latest`)).servers.map((s) => s.server.name)).toEqual(SHARED_NAMES);
    expect((await getList(`${base}/v0.1/servers?version=2.0.0`)).servers.map((s) => s.server.name)).toEqual(["com.example/billing"]);
    expect((await getList(`${base}/v0.1/servers?search=CAL`)).servers.map((s) => s.server.name)).toEqual(["com.example/calendar"]);
    expect((await getList(`${base}/v0.1/servers?updated_since=${encodeURIComponent(startedAt)}`)).servers).toHaveLength(SHARED_NAMES.length);
    expect((await getList(`${base}/v0.1/servers?updated_since=2999-01-01T00:00:00Z`)).servers).toEqual([]);
    // A filtered scan pages too, its cursor bound to its filters.
    const first = await getList(`${base}/v0.1/servers?search=e&limit=1`);
    expect(first.metadata.nextCursor).toBeDefined();
    await expectError(await fetch(`${base}/v0.1/servers?search=a&limit=1&cursor=${first.metadata.nextCursor!}`), 400, "cursor");
  });

  it.each([
    ["limit=0", "limit"],
    ["limit=101", "limit"],
    ["limit=ten", "limit"],
    ["limit=1&limit=2", "limit"],
    ["cursor=not-a-cursor!", "cursor"],
    ["cursor=eyJ4IjoxfQ", "cursor"],
    ["updated_since=yesterday", "updated_since"],
    ["updated_since=2025-08-07", "updated_since"],
    ["version=", "version"],
    ["q=weather", "q"],
  ])("refuses %s with 400 in the spec's error shape", async (query, mentions) => {
    await expectError(await fetch(`${base}/v0.1/servers?${query}`), 400, mentions);
  });
});

describe("a server by name", () => {
  it("lists its versions (the one the registry keeps) and answers it by version and by latest", async () => {
    const versions = await getList(`${base}/v0.1/servers/com.example%2Fweather/versions`);
    expect(versions.servers.map((s) => [s.server.name, s.server.version])).toEqual([["com.example/weather", "1.0.0"]]);
    for (const version of ["latest", "1.0.0"]) {
      const res = await fetch(`${base}/v0.1/servers/com.example%2Fweather/versions/${version}`);
      expect(res.status).toBe(200);
      const record = (await res.json()) as ServerResponse;
      expect(serverResponseProblems(record)).toBe("");
      expect(record).toEqual(versions.servers[0]);
    }
  });

  it.each([
    ["an unknown name", "com.example%2Fnope/versions"],
    ["another namespace", "org.example%2Fweather/versions/latest"],
    ["a non-MCP agent", "com.example%2Ftranslator/versions/latest"],
    ["a name that is no server name", "weather/versions"],
    ["another version", "com.example%2Fweather/versions/9.9.9"],
    ["a tenant's server in the shared view", "com.example%2Facme.books/versions/latest"],
  ])("answers 404 for %s", async (_what, path) => {
    await expectError(await fetch(`${base}/v0.1/servers/${path}`), 404);
  });

  it("is read-only: publish and delete are 501, another method 405", async () => {
    await expectError(await fetch(`${base}/v0.1/publish`, { method: "POST", body: "{}" }), 501, "Publishing");
    await expectError(await fetch(`${base}/v0.1/servers/com.example%2Fweather/versions/1.0.0`, { method: "DELETE" }), 501, "Deletion");
    const res = await fetch(`${base}/v0.1/servers`, { method: "PUT" });
    expect(res.headers.get("allow")).toBe("GET, HEAD");
    await expectError(res, 405);
  });
});

describe("tenancy and the bearer token", () => {
  it("serves a tenant's view under /tenants/<tenant>/, its own servers named <tenant>.<agent_type>", async () => {
    const names = (await getList(`${base}/tenants/acme/v0.1/servers`)).servers.map((s) => s.server.name);
    // In the registry's agent_type order, so the tenant's `books` comes between `billing` and `calendar`.
    expect(names).toEqual([...SHARED_NAMES, "com.example/acme.books"].sort((x, y) => x.replace("acme.", "").localeCompare(y.replace("acme.", ""))));
    const res = await fetch(`${base}/tenants/acme/v0.1/servers/com.example%2Facme.books/versions/latest`);
    expect(res.status).toBe(200);
    expect(serverResponseProblems(await res.json())).toBe("");
    // Exact inversion: the shared name of the same type does not reach the tenant's agent.
    await expectError(await fetch(`${base}/tenants/acme/v0.1/servers/com.example%2Fbooks/versions`), 404);
    await expectError(await fetch(`${base}/tenants/Not_A_Tenant!/v0.1/servers`), 400);
  });

  it("needs the token when one is configured, and answers 401 in the spec's shape without it", async () => {
    const refused = await fetch(`${guardedBase}/v0.1/servers`);
    expect(refused.headers.get("www-authenticate")).toContain("Bearer");
    await expectError(refused, 401);
    const res = await fetch(`${guardedBase}/v0.1/servers?limit=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(mcpProblems(mcpRegistrySchemas.serverList, await res.json())).toBe("");
  });
});
