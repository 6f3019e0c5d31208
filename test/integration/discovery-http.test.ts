/**
 * The discovery front (src/discovery, docs/discovery.md) over real HTTP against a real
 * registry: what it serves validates against ARD's own schemas (test/fixtures/ard), a stock
 * client (fetch) follows the manifest to the search API and on to valid A2A cards, and bad
 * input gets ARD's error body with the right status.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DiscoveryServer } from "../../src/discovery/http-server.js";
import { checkCardSchema } from "../../src/domain/interop/a2a/card-check.js";
import { ardSchemas, problems } from "../harness/ard-schemas.js";
import { startDiscoveryFleet, type DiscoveryFleet } from "../harness/discovery.js";
import { waitFor } from "../harness/wait.js";

let fleet: DiscoveryFleet;
let open: DiscoveryServer;
let guarded: DiscoveryServer;
let base: string;
let guardedBase: string;

const TOKEN = "discovery-t0ken";

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

async function expectArdError(res: Response, status: number, errorCode: string): Promise<string> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { errorCode: string; message: string };
  expect(ardSchemas.error(body), problems(ardSchemas.error)).toBe(true);
  expect(body.errorCode).toBe(errorCode);
  return body.message;
}

beforeAll(async () => {
  fleet = await startDiscoveryFleet();
  open = await fleet.startFront();
  guarded = await fleet.startFront({ token: TOKEN });
  base = open.url;
  guardedBase = guarded.url;
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

describe("the ai-catalog.json manifest", () => {
  it("lists the registry and the shared fleet, valid against ai-catalog.schema.json", async () => {
    const res = await fetch(`${base}/.well-known/ai-catalog.json`);
    expect(res.status).toBe(200);
    const manifest = (await res.json()) as { entries: Array<Record<string, any>> };
    expect(ardSchemas.manifest(manifest), problems(ardSchemas.manifest)).toBe(true);
    const byId = new Map(manifest.entries.map((e) => [e.identifier, e]));
    expect(byId.get("urn:air:example.com:registry:shared")).toMatchObject({ type: "application/ai-registry+json", url: `${base}/` });
    expect(byId.get("urn:air:example.com:shared:translator")).toMatchObject({
      type: "application/a2a-agent-card+json",
      url: `${base}/agents/translator/agent-card.json`,
      capabilities: ["text.translate"],
      representativeQueries: ["translate this email into French", "what is hello in Spanish"],
    });
    expect(byId.get("urn:air:example.com:shared:weather")).toMatchObject({ type: "application/mcp-server-card+json", url: `${base}/agents/weather/mcp-server-card.json` });
    // A tenant's agent is not in the shared view.
    expect([...byId.keys()].some((id) => id.endsWith(":ledger"))).toBe(false);
    for (const e of manifest.entries) {
      expect(() => new URL(e.url)).not.toThrow();
      if (e.updatedAt !== undefined) expect(Number.isNaN(Date.parse(e.updatedAt))).toBe(false);
    }
  });

  it("a tenant's path lists the shared agents and the tenant's own", async () => {
    const manifest = (await (await fetch(`${base}/tenants/acme/.well-known/ai-catalog.json`)).json()) as { entries: Array<Record<string, any>> };
    expect(ardSchemas.manifest(manifest), problems(ardSchemas.manifest)).toBe(true);
    const ids = manifest.entries.map((e) => e.identifier);
    expect(ids).toEqual(expect.arrayContaining(["urn:air:example.com:registry:acme", "urn:air:example.com:acme:ledger", "urn:air:example.com:shared:translator"]));
    const ledger = manifest.entries.find((e) => e.identifier === "urn:air:example.com:acme:ledger")!;
    expect(ledger.url).toBe(`${base}/tenants/acme/agents/ledger/agent-card.json`);
  });
});

describe("a stock HTTP client that knows only the domain", () => {
  it("follows the manifest to the search API and gets ranked entries whose urls are valid A2A cards", async () => {
    const manifest = (await (await fetch(new URL("/.well-known/ai-catalog.json", base))).json()) as { entries: Array<{ type: string; url: string }> };
    const registryEntry = manifest.entries.find((e) => e.type === "application/ai-registry+json")!;
    const res = await post(new URL("search", registryEntry.url).href, { query: { text: "translate text" }, federation: "none" });
    expect(res.status).toBe(200);
    const found = (await res.json()) as { results: Array<{ identifier: string; type: string; url: string; score: number; source: string }> };
    expect(ardSchemas.searchResponse(found), problems(ardSchemas.searchResponse)).toBe(true);
    expect(found.results[0]).toMatchObject({ identifier: "urn:air:example.com:shared:translator", score: 100, source: registryEntry.url });
    const scores = found.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    const a2a = found.results.filter((r) => r.type === "application/a2a-agent-card+json");
    expect(a2a.length).toBeGreaterThan(0);
    for (const result of a2a) {
      const card = await (await fetch(result.url)).json();
      expect(checkCardSchema(card, "1.0")).toEqual([]);
    }
  });
});

describe("POST /search", () => {
  const search = (body: unknown, path = "/search") => post(`${base}${path}`, body);

  it("filters with dot paths: OR within a key, AND across keys, publisher from the URN", async () => {
    const both = (await (await search({ query: { text: "text documents weather", filter: { type: ["application/a2a-agent-card+json", "application/mcp-server-card+json"] } } })).json()) as { results: Array<{ identifier: string }> };
    expect(both.results.map((r) => r.identifier)).toEqual(expect.arrayContaining(["urn:air:example.com:shared:weather", "urn:air:example.com:shared:translator"]));
    const anded = (await (await search({ query: { text: "text documents weather", filter: { type: "application/a2a-agent-card+json", tags: ["translation"], publisher: "example.com" } } })).json()) as { results: Array<{ identifier: string }> };
    expect(anded.results.map((r) => r.identifier)).toEqual(["urn:air:example.com:shared:translator"]);
    const none = (await (await search({ query: { text: "text", filter: { publisher: "other.org" } } })).json()) as { results: unknown[] };
    expect(none.results).toEqual([]);
  });

  it("pages with pageSize and pageToken, and refuses a token of another query", async () => {
    const first = (await (await search({ query: { text: "text documents" }, pageSize: 1 })).json()) as { results: Array<{ identifier: string }>; pageToken?: string };
    expect(first.results).toHaveLength(1);
    expect(first.pageToken).toBeTypeOf("string");
    const second = (await (await search({ query: { text: "text documents" }, pageSize: 1, pageToken: first.pageToken })).json()) as { results: Array<{ identifier: string }> };
    expect(second.results).toHaveLength(1);
    expect(second.results[0]!.identifier).not.toBe(first.results[0]!.identifier);
    await expectArdError(await search({ query: { text: "weather" }, pageToken: first.pageToken }), 400, "INVALID_ARGUMENT");
    await expectArdError(await search({ query: { text: "weather" }, pageToken: "not-a-token" }), 400, "INVALID_ARGUMENT");
  });

  it("names the configured upstream registries with federation referrals, and none otherwise", async () => {
    const withUpstream = await fleet.startFront({ referrals: "urn:air:example.org:registry:public=https://finder.example.org/" });
    const body = { query: { text: "translate text" }, federation: "referrals" };
    const referred = (await (await post(`${withUpstream.url}/search`, body)).json()) as Record<string, any>;
    expect(ardSchemas.searchResponse(referred), problems(ardSchemas.searchResponse)).toBe(true);
    expect(referred.referrals).toEqual([{ identifier: "urn:air:example.org:registry:public", displayName: "urn:air:example.org:registry:public", type: "application/ai-registry+json", url: "https://finder.example.org/" }]);
    expect(referred.results[0].identifier).toBe("urn:air:example.com:shared:translator");
    expect(((await (await search(body)).json()) as Record<string, any>).referrals).toEqual([]);
    expect(((await (await search({ query: { text: "translate text" }, federation: "none" })).json()) as Record<string, any>).referrals).toBeUndefined();
  });

  it("finds an agent by its representative queries (v1.2) and carries them in its entry", async () => {
    const found = (await (await search({ query: { text: "gist of meeting notes" } })).json()) as { results: Array<{ identifier: string; representativeQueries?: string[] }> };
    expect(found.results[0]).toMatchObject({ identifier: "urn:air:example.com:shared:summarizer", representativeQueries: ["give me the gist of the meeting notes", "shorten this report"] });
  });

  it("searches a tenant's view under its path", async () => {
    const shared = (await (await search({ query: { text: "ledger invoices" } })).json()) as { results: unknown[] };
    expect(shared.results).toEqual([]);
    const acme = (await (await search({ query: { text: "ledger invoices" } }, "/tenants/acme/search")).json()) as { results: Array<{ identifier: string; source: string }> };
    expect(acme.results[0]).toMatchObject({ identifier: "urn:air:example.com:acme:ledger", source: `${base}/tenants/acme/` });
  });

  it("answers bad input with 400 INVALID_ARGUMENT (or 413) and says why", async () => {
    expect(await expectArdError(await search("{not json"), 400, "INVALID_ARGUMENT")).toMatch(/not JSON/);
    expect(await expectArdError(await search({ query: { text: "x", filter: { "trustManifest.identity": ["a"] } } }), 400, "INVALID_ARGUMENT")).toMatch(/not supported/);
    expect(await expectArdError(await search({ query: { text: "x" }, pageSize: 1_000_000 }), 400, "INVALID_ARGUMENT")).toMatch(/pageSize/);
    expect(await expectArdError(await search({ query: { text: "x" }, pageSize: 0 }), 400, "INVALID_ARGUMENT")).toMatch(/pageSize/);
    expect(await expectArdError(await search({ query: { filter: {} } }), 400, "INVALID_ARGUMENT")).toMatch(/query.text/);
    expect(await expectArdError(await search({ query: { text: "x" }, federation: "sideways" }), 400, "INVALID_ARGUMENT")).toMatch(/federation/);
    expect(await expectArdError(await search({ query: { text: "x" }, extra: 1 }), 400, "INVALID_ARGUMENT")).toMatch(/extra/);
    await expectArdError(await search({ query: { text: "x".repeat(2000) } }), 400, "INVALID_ARGUMENT");
    await expectArdError(await search({ query: { text: "x", filter: { tags: "y".repeat(70_000) } } }), 413, "PAYLOAD_TOO_LARGE");
    await expectArdError(await fetch(`${base}/search`), 405, "METHOD_NOT_ALLOWED");
    await expectArdError(await search({ query: { text: "x" } }, "/tenants/Not_A_Tenant/search"), 400, "INVALID_ARGUMENT");
  });
});

describe("POST /explore", () => {
  const explore = (body: unknown, path = "/explore") => post(`${base}${path}`, body);

  it("counts the whole view's entries per facet without a query, valid against ExploreResponse", async () => {
    const body = { resultType: { facets: [{ field: "type" }, { field: "publisher" }, { field: "tags", limit: 1 }] } };
    expect(ardSchemas.exploreRequest(body), problems(ardSchemas.exploreRequest)).toBe(true);
    const res = await explore(body);
    expect(res.status).toBe(200);
    const facets = (await res.json()) as Record<string, any>;
    expect(ardSchemas.exploreResponse(facets), problems(ardSchemas.exploreResponse)).toBe(true);
    expect(facets.facets.type.buckets).toEqual([
      { value: "application/a2a-agent-card+json", count: 2 },
      { value: "application/mcp-server-card+json", count: 1 },
    ]);
    expect(facets.facets.publisher.buckets).toEqual([{ value: "example.com", count: 3 }]);
    // language (2 agents) first; translation and weather (1 each) beyond the limit of 1.
    expect(facets.facets.tags).toEqual({ buckets: [{ value: "language", count: 2 }], otherCount: 2 });
  });

  it("narrows the matched set by text and filter, and by tenant path", async () => {
    const narrowed = (await (await explore({ query: { text: "text documents", filter: { tags: "translation" } }, resultType: { facets: [{ field: "metadata.agent_type" }] } })).json()) as Record<string, any>;
    expect(narrowed.facets["metadata.agent_type"].buckets).toEqual([{ value: "translator", count: 1 }]);
    const acme = (await (await explore({ resultType: { facets: [{ field: "metadata.tenant", minCount: 1 }] } }, "/tenants/acme/explore")).json()) as Record<string, any>;
    expect(acme.facets["metadata.tenant"].buckets).toEqual([{ value: "null", count: 3 }, { value: "acme", count: 1 }]);
  });

  it("refuses an unknown facet field, a missing resultType and a huge limit", async () => {
    expect(await expectArdError(await explore({ resultType: { facets: [{ field: "trustManifest.identity" }] } }), 400, "INVALID_ARGUMENT")).toMatch(/field must be one of/);
    await expectArdError(await explore({ query: { text: "x" } }), 400, "INVALID_ARGUMENT");
    await expectArdError(await explore({ resultType: { facets: [{ field: "type", limit: 1_000_000 }] } }), 400, "INVALID_ARGUMENT");
    await expectArdError(await fetch(`${base}/explore`), 405, "METHOD_NOT_ALLOWED");
  });
});

describe("GET /agents and entries by URN", () => {
  it("pages the fleet, each page valid against ListResponse", async () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const res = await fetch(`${base}/agents?pageSize=1${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`);
      const page = (await res.json()) as { items: Array<{ identifier: string }>; pageToken?: string };
      expect(ardSchemas.listResponse(page), problems(ardSchemas.listResponse)).toBe(true);
      expect(page.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.items.map((i) => i.identifier));
      token = page.pageToken;
    } while (token !== undefined);
    expect(seen.sort()).toEqual(["urn:air:example.com:shared:summarizer", "urn:air:example.com:shared:translator", "urn:air:example.com:shared:weather"]);
    await expectArdError(await fetch(`${base}/agents?pageSize=101`), 400, "INVALID_ARGUMENT");
    await expectArdError(await fetch(`${base}/agents?pageSize=ten`), 400, "INVALID_ARGUMENT");
  });

  describe("filter and orderBy (ARD appendix A)", () => {
    const list = async (params: Record<string, string>) => {
      const res = await fetch(`${base}/agents?${new URLSearchParams(params)}`);
      const page = (await res.json()) as { items: Array<{ identifier: string }>; pageToken?: string };
      expect(res.status, JSON.stringify(page)).toBe(200);
      expect(ardSchemas.listResponse(page), problems(ardSchemas.listResponse)).toBe(true);
      return page;
    };
    const ids = async (params: Record<string, string>) => (await list(params)).items.map((i) => i.identifier.split(":")[4]);

    it("keeps the entries that pass every condition: AND across fields, OR within one", async () => {
      expect(await ids({ filter: "type = 'application/mcp-server-card+json'" })).toEqual(["weather"]);
      expect(await ids({ filter: "type = 'application/a2a-agent-card+json,application/mcp-server-card+json'" })).toEqual(["summarizer", "translator", "weather"]);
      expect(await ids({ filter: "type = application/a2a-agent-card+json AND displayName = 'SUMM'" })).toEqual(["summarizer"]);
      expect(await ids({ filter: "publisherId = 'EXAMPLE.com', 'other.org'" })).toEqual(["summarizer", "translator", "weather"]);
      expect(await ids({ filter: "publisherId = 'other.org'" })).toEqual([]);
      expect(await ids({ filter: "createdAfter > '2000-01-01' and updatedAfter > '2000-01-01T00:00:00Z'" })).toEqual(["summarizer", "translator", "weather"]);
      expect(await ids({ filter: `createdAfter > '${new Date(Date.now() + 86_400_000).toISOString()}'` })).toEqual([]);
    });

    it("orders by the keys given, ties by identifier, and pages the ordered set with tokens bound to it", async () => {
      expect(await ids({ orderBy: "displayName DESC" })).toEqual(["weather", "translator", "summarizer"]);
      expect(await ids({ orderBy: "name", filter: "type = 'application/a2a-agent-card+json'" })).toEqual(["summarizer", "translator"]);
      const walked: string[] = [];
      let pageToken: string | undefined;
      do {
        const page = await list({ orderBy: "identifier desc", pageSize: "1", ...(pageToken ? { pageToken } : {}) });
        walked.push(...page.items.map((i) => i.identifier.split(":")[4]!));
        pageToken = page.pageToken;
      } while (pageToken !== undefined && walked.length < 10);
      expect(walked).toEqual(["weather", "translator", "summarizer"]);
      const first = await list({ orderBy: "identifier desc", pageSize: "1" });
      await expectArdError(await fetch(`${base}/agents?${new URLSearchParams({ orderBy: "identifier", pageSize: "1", pageToken: first.pageToken! })}`), 400, "INVALID_ARGUMENT");
    });

    it("pages a filtered list in the registry's order", async () => {
      const first = await list({ filter: "type = 'application/a2a-agent-card+json'", pageSize: "1" });
      expect(first.items.map((i) => i.identifier)).toEqual(["urn:air:example.com:shared:summarizer"]);
      const second = await list({ filter: "type = 'application/a2a-agent-card+json'", pageSize: "1", pageToken: first.pageToken! });
      expect(second.items.map((i) => i.identifier)).toEqual(["urn:air:example.com:shared:translator"]);
    });

    it.each([
      ["an unknown field", { filter: "owner = 'x'" }, "expected a field"],
      ["> on a name", { filter: "displayName > 'x'" }, 'takes "="'],
      ["an unclosed quote", { filter: "type = 'x" }, "not closed"],
      ["a missing value", { filter: "type =" }, "needs a value"],
      ["OR between conditions", { filter: "type = 'x' OR type = 'y'" }, "expected AND"],
      ["a field twice", { filter: "type = 'x' AND type = 'y'" }, "given twice"],
      ["a date that is none", { filter: "createdAfter > 'yesterday'" }, "ISO 8601"],
      ["an unknown order key", { orderBy: "score DESC" }, "orderBy"],
      ["a direction that is none", { orderBy: "displayName UP" }, "orderBy"],
    ])("refuses %s with 400 naming the problem", async (_, params, mentions) => {
      const body = await expectArdError(await fetch(`${base}/agents?${new URLSearchParams(params)}`), 400, "INVALID_ARGUMENT");
      expect(body).toContain(mentions);
    });

    it("refuses a repeated parameter and an over-long filter", async () => {
      await expectArdError(await fetch(`${base}/agents?filter=type%3Dx&filter=type%3Dy`), 400, "INVALID_ARGUMENT");
      await expectArdError(await fetch(`${base}/agents?${new URLSearchParams({ filter: `displayName = '${"x".repeat(3000)}'` })}`), 400, "INVALID_ARGUMENT");
    });
  });

  it("serves one entry by its URN with an ETag, and 304 when the client holds it", async () => {
    const urn = "urn:air:example.com:shared:translator";
    const res = await fetch(`${base}/agents/${encodeURIComponent(urn)}`);
    expect(res.status).toBe(200);
    const entry = await res.json();
    expect(ardSchemas.catalogEntry(entry), problems(ardSchemas.catalogEntry)).toBe(true);
    expect(entry).toMatchObject({ identifier: urn });
    expect(res.headers.get("cache-control")).toBe("public, max-age=30");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await fetch(`${base}/agents/${encodeURIComponent(urn)}`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    await expectArdError(await fetch(`${base}/agents/${encodeURIComponent("urn:air:other.org:shared:translator")}`), 404, "NOT_FOUND");
    await expectArdError(await fetch(`${base}/agents/${encodeURIComponent("urn:air:example.com:acme:ledger")}`), 404, "NOT_FOUND");
    expect((await fetch(`${base}/tenants/acme/agents/${encodeURIComponent("urn:air:example.com:acme:ledger")}`)).status).toBe(200);
  });

  it("serves an MCP-kind agent's server card with its tools", async () => {
    const card = (await (await fetch(`${base}/agents/weather/mcp-server-card.json`)).json()) as { name: string; tools: Array<{ name: string; inputSchema: unknown }> };
    expect(card.tools.map((t) => t.name)).toEqual(["weather.forecast"]);
    await expectArdError(await fetch(`${base}/agents/translator/mcp-server-card.json`), 404, "NOT_FOUND");
    await expectArdError(await fetch(`${base}/agents/nobody/agent-card.json`), 404, "NOT_FOUND");
  });
});

describe("the bearer token", () => {
  it("is required on every path when configured, and a wrong one is refused", async () => {
    const missing = await fetch(`${guardedBase}/.well-known/ai-catalog.json`);
    await expectArdError(missing, 401, "UNAUTHENTICATED");
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer /);
    await expectArdError(await post(`${guardedBase}/search`, { query: { text: "x" } }, { authorization: "Bearer wrong" }), 401, "UNAUTHENTICATED");
    const ok = await fetch(`${guardedBase}/agents`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    const entry = await fetch(`${guardedBase}/agents/${encodeURIComponent("urn:air:example.com:shared:translator")}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(entry.headers.get("cache-control")).toBe("private, max-age=30");
  });
});

describe("requests in flight", () => {
  it("refuses one more than the bound with 429 while a request is still being read", async () => {
    const narrow = await fleet.startFront({ maxInFlight: 1 });
    const { port } = new URL(narrow.url);
    // A search whose body is still coming holds the one place.
    const socket = connect(Number(port), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
    try {
      let refused: Response | undefined;
      await waitFor(async () => {
        const res = await fetch(`${narrow.url}/agents`);
        if (res.status === 429) refused = res;
        else await res.body?.cancel();
        return refused !== undefined;
      }, { timeoutMs: 5_000, message: "the second request to be refused" });
      expect(refused!.headers.get("retry-after")).toBe("1");
      await expectArdError(refused!, 429, "RATE_LIMIT_EXCEEDED");
    } finally {
      socket.destroy();
    }
    // The place is given back once that request's connection is gone.
    await waitFor(async () => (await fetch(`${narrow.url}/agents`)).status === 200, { timeoutMs: 5_000, message: "the place to be given back" });
  });
});
