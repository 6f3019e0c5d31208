/**
 * The discovery front's pure parts (src/discovery): entries from agent views, ARD's filter
 * semantics, the search body's rules and limits, page tokens bound to their query, and
 * Explore's request and facet counts.
 */
import { describe, expect, it } from "vitest";
import { loadDiscoveryConfig } from "../../../src/config/discovery.js";
import { ArdError } from "../../../src/discovery/ard-error.js";
import { catalogEntry, entryIdentifier, parseIdentifier } from "../../../src/discovery/catalog-entry.js";
import { matchesFilter, parseFilter } from "../../../src/discovery/entry-filter.js";
import { countFacets, parseExploreRequest } from "../../../src/discovery/explore.js";
import { decodePageToken, encodePageToken, queryDigest } from "../../../src/discovery/page-token.js";
import { parseSearchRequest } from "../../../src/discovery/search-request.js";
import type { AgentView } from "../../../src/protocol/messages.js";
import { ardSchemas, problems } from "../../harness/ard-schemas.js";

const links = { publisher: "example.com", baseUrl: "https://agents.example.com" };

function view(overrides: Partial<AgentView> = {}): AgentView {
  return {
    agent_type: "translator",
    version: "1.2.0",
    description: "translates",
    kind: "agent",
    tenant_scope: null,
    status: "ready",
    registered_at: "2026-11-27T10:00:00.000Z",
    instance_count: 2,
    capabilities: [
      { name: "text.translate", description: "", tags: ["language", "translation"], examples: ["translate this", "say it in French", "translate this"], input_schema: {}, output_schema: {} },
      { name: "text.detect", description: "", tags: ["language"], examples: [], input_schema: {}, output_schema: {} },
    ],
    ...overrides,
  } as AgentView;
}

const invalid = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ArdError);
    expect((e as ArdError).errorCode).toBe("INVALID_ARGUMENT");
    return (e as Error).message;
  }
  throw new Error("expected INVALID_ARGUMENT");
};

describe("catalog entries", () => {
  it("names a shared agent and a tenant's under their namespaces, and reads such URNs back", () => {
    expect(entryIdentifier("example.com", "translator", null)).toBe("urn:air:example.com:shared:translator");
    expect(entryIdentifier("example.com", "ledger", "acme")).toBe("urn:air:example.com:acme:ledger");
    expect(parseIdentifier("urn:air:example.com:acme:ledger", "example.com")).toEqual({ namespace: "acme", agentType: "ledger" });
    expect(parseIdentifier("urn:air:other.org:acme:ledger", "example.com")).toBeNull();
    expect(parseIdentifier("urn:air:example.com:ledger", "example.com")).toBeNull();
  });

  it("builds an entry valid against ai-catalog.schema.json, examples as distinct representative queries", () => {
    const entry = catalogEntry(view(), links);
    expect(ardSchemas.catalogEntry(entry), problems(ardSchemas.catalogEntry)).toBe(true);
    expect(entry).toMatchObject({
      type: "application/a2a-agent-card+json",
      url: "https://agents.example.com/agents/translator/agent-card.json",
      tags: ["language", "translation"],
      capabilities: ["text.translate", "text.detect"],
      representativeQueries: ["translate this", "say it in French"],
    });
  });

  it("leaves representativeQueries out below the schema's 2, and types MCP-kind agents as MCP server cards", () => {
    const oneExample = view({ kind: "mcp_server", capabilities: [{ ...view().capabilities[0]!, examples: ["only one"] }] });
    const entry = catalogEntry(oneExample, links);
    expect(entry.representativeQueries).toBeUndefined();
    expect(entry).toMatchObject({ type: "application/mcp-server-card+json", url: "https://agents.example.com/agents/translator/mcp-server-card.json" });
    expect(ardSchemas.catalogEntry(entry), problems(ardSchemas.catalogEntry)).toBe(true);
  });
});

describe("filters", () => {
  const entry = catalogEntry(view(), links);

  it("ORs the values of a key, ANDs the keys, matches any element of an array field", () => {
    expect(matchesFilter(entry, parseFilter({ tags: ["finance", "translation"] }))).toBe(true);
    expect(matchesFilter(entry, parseFilter({ tags: ["translation"], type: "application/mcp-server-card+json" }))).toBe(false);
    expect(matchesFilter(entry, parseFilter({ publisher: "example.com", "metadata.kind": "agent", capabilities: ["text.detect"] }))).toBe(true);
  });

  it("reads the publisher from the URN and metadata by dot path (numbers and null as text)", () => {
    expect(matchesFilter(entry, parseFilter({ publisher: ["other.org"] }))).toBe(false);
    expect(matchesFilter(entry, parseFilter({ "metadata.tenant": ["null"] }))).toBe(true);
  });

  it("refuses an unsupported path, a non-string value, and too many values", () => {
    expect(invalid(() => parseFilter({ "trustManifest.identity": ["x"] }))).toMatch(/not supported; supported: identifier/);
    invalid(() => parseFilter({ tags: [1] }));
    invalid(() => parseFilter({ tags: [] }));
    invalid(() => parseFilter({ tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }));
    invalid(() => parseFilter(["tags"]));
  });
});

describe("the search body", () => {
  it("takes the spec's example request, with its defaults", () => {
    const body = { query: { text: "find me a flight booking agent", filter: { type: ["application/a2a-agent-card+json"] } }, federation: "none", pageSize: 5 };
    expect(ardSchemas.searchRequest(body), problems(ardSchemas.searchRequest)).toBe(true);
    expect(parseSearchRequest(body)).toMatchObject({ text: "find me a flight booking agent", pageSize: 5, pageToken: undefined });
    expect(parseSearchRequest({ query: { text: "x" } }).pageSize).toBe(10);
  });

  it("refuses what the spec's schema refuses, and what is past this registry's limits", () => {
    invalid(() => parseSearchRequest({}));
    invalid(() => parseSearchRequest({ query: { text: "" } }));
    invalid(() => parseSearchRequest({ query: { text: "x", limit: 3 } }));
    invalid(() => parseSearchRequest({ query: { text: "x" }, pageSize: 101 }));
    invalid(() => parseSearchRequest({ query: { text: "x" }, pageSize: 2.5 }));
    invalid(() => parseSearchRequest({ query: { text: "x" }, federation: "sideways" }));
    invalid(() => parseSearchRequest({ query: { text: "x" }, pageToken: "t".repeat(513) }));
  });
});

describe("page tokens", () => {
  it("carry the offset for the same query, whatever the order of the filter's keys and values", () => {
    const a = queryDigest("x", parseFilter({ tags: ["b", "a"], type: "t" }));
    const b = queryDigest("x", parseFilter({ type: ["t"], tags: ["a", "b"] }));
    expect(a).toBe(b);
    expect(decodePageToken(encodePageToken(20, a), b)).toBe(20);
    expect(decodePageToken(undefined, a)).toBe(0);
  });

  it("are refused for another query or when they are not ours", () => {
    const digest = queryDigest("x", new Map());
    expect(invalid(() => decodePageToken(encodePageToken(10, digest), queryDigest("y", new Map())))).toMatch(/another query/);
    invalid(() => decodePageToken("%%%", digest));
    invalid(() => decodePageToken(Buffer.from(JSON.stringify({ o: -1, q: digest })).toString("base64url"), digest));
  });
});

describe("explore", () => {
  const entries = [
    catalogEntry(view({ agent_type: "a" }), links),
    catalogEntry(view({ agent_type: "b", kind: "mcp_server" }), links),
    catalogEntry(view({ agent_type: "c", capabilities: [{ ...view().capabilities[1]!, tags: ["x"] }] }), links),
  ];

  it("counts each entry once per value, ranks buckets by count, and sums what is past the limit into otherCount", () => {
    const facets = countFacets(entries, [
      { field: "tags", limit: 1, minCount: 1 },
      { field: "type", limit: 20, minCount: 2 },
    ]);
    // language 2, translation 2 (ties go by value), x 1: the last two are past the limit.
    expect(facets.tags).toEqual({ buckets: [{ value: "language", count: 2 }], otherCount: 3 });
    expect(facets.type).toEqual({ buckets: [{ value: "application/a2a-agent-card+json", count: 2 }] });
  });

  it("takes the spec's example request and refuses unknown fields and members", () => {
    const body = { query: { text: "currency conversion", filter: { type: ["application/mcp-server-card+json"] } }, resultType: { facets: [{ field: "type" }, { field: "publisher", limit: 50 }] } };
    expect(ardSchemas.exploreRequest(body), problems(ardSchemas.exploreRequest)).toBe(true);
    expect(parseExploreRequest(body).facets).toEqual([
      { field: "type", limit: 20, minCount: 1 },
      { field: "publisher", limit: 50, minCount: 1 },
    ]);
    invalid(() => parseExploreRequest({ resultType: { facets: [{ field: "host.displayName" }] } }));
    invalid(() => parseExploreRequest({ resultType: { facets: [{ field: "type" }, { field: "type" }] } }));
    invalid(() => parseExploreRequest({ resultType: { facets: [{ field: "type", size: 3 }] } }));
    invalid(() => parseExploreRequest({ resultType: { facets: [] } }));
  });
});

describe("the referrals setting", () => {
  it("takes <urn>=<url> items and refuses anything else, naming the variable", () => {
    const config = loadDiscoveryConfig({}, { REGISTRY_DISCOVERY_REFERRALS: "urn:air:a.org:registry:x=https://a.org/api/, urn:air:b.org:registry:y=http://b.org/" });
    expect(config.referrals).toEqual([
      { identifier: "urn:air:a.org:registry:x", url: "https://a.org/api/" },
      { identifier: "urn:air:b.org:registry:y", url: "http://b.org/" },
    ]);
    for (const bad of ["https://a.org/", "urn:air:a.org:registry:x=ftp://a.org/", "not-a-urn=https://a.org/", "urn:air:a.org:registry:x="]) {
      expect(() => loadDiscoveryConfig({}, { REGISTRY_DISCOVERY_REFERRALS: bad }), bad).toThrow(/REGISTRY_DISCOVERY_REFERRALS \/ --referral/);
    }
  });
});
