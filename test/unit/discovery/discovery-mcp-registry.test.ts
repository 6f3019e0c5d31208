/**
 * The MCP Registry API's pure parts (src/discovery): server names and their exact inversion,
 * server.json records from agent views (checked against the official schemas), and the list
 * query's rules, every bad value a 400.
 */
import { describe, expect, it } from "vitest";
import { ArdError } from "../../../src/discovery/ard-error.js";
import { parseServerName, reverseDomain, serverName } from "../../../src/discovery/server-name.js";
import { encodeServerCursor, parseServerQuery } from "../../../src/discovery/server-query.js";
import { clip, OFFICIAL_META_KEY, remotesOf, serverRecord } from "../../../src/discovery/server-record.js";
import type { AgentView } from "../../../src/protocol/messages.js";
import { serverResponseProblems } from "../../harness/mcp-registry-schemas.js";

function view(overrides: Partial<AgentView> = {}): AgentView {
  return {
    agent_type: "weather",
    version: "1.2.0",
    description: "weather data",
    kind: "mcp_server",
    tenant_scope: null,
    status: "ready",
    registered_at: "2026-11-27T10:00:00.000Z",
    instance_count: 1,
    capabilities: [],
    ...overrides,
  } as AgentView;
}

const invalid = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ArdError);
    expect((e as ArdError).status).toBe(400);
    return (e as Error).message;
  }
  throw new Error("expected a 400");
};

const query = (text: string) => parseServerQuery(new URLSearchParams(text));

describe("server names", () => {
  it("reverses the publisher domain and round-trips shared and tenant agents", () => {
    expect(reverseDomain("agents.example.com")).toBe("com.example.agents");
    for (const [type, tenant] of [["weather", null], ["docs-search_2", null], ["books", "acme"], ["a", "t_1"]] as const) {
      const name = serverName("example.com", type, tenant)!;
      expect(name).toBe(`com.example/${tenant === null ? "" : `${tenant}.`}${type}`);
      expect(parseServerName(name, "example.com")).toEqual({ agentType: type, tenant });
    }
    expect(serverName("localhost", "weather", null)).toBe("localhost/weather");
  });

  it("refuses every name this mapping did not make", () => {
    for (const name of [
      "org.example/weather", // another namespace
      "example.com/weather", // the domain not reversed
      "com.example/Weather", // agent types are lower case
      "com.example/a.b.c", // one dot only: tenant, then agent type
      "com.example/.weather",
      "com.example/acme.",
      "com.example/-weather",
      "com.example/weather/x",
      "com.example",
      "",
      `com.example/${"a".repeat(190)}`, // past 200 characters
    ]) {
      expect(parseServerName(name, "example.com"), name).toBeNull();
    }
  });

  it("has no name for an agent whose name would pass 200 characters", () => {
    const publisher = `${"p".repeat(60)}.${"q".repeat(60)}.example.com`;
    expect(serverName(publisher, "a".repeat(128), null)).toBeNull();
    expect(serverRecord(view({ agent_type: "a".repeat(128) }), publisher)).toBeNull();
  });
});

describe("server records", () => {
  it("is a valid ServerResponse and server.json, the only version and so the latest", () => {
    const record = serverRecord(view(), "example.com")!;
    expect(serverResponseProblems(record)).toBe("");
    expect(record.server).toEqual({ $schema: "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json", name: "com.example/weather", description: "weather data", version: "1.2.0" });
    expect(record._meta[OFFICIAL_META_KEY]).toEqual({ status: "active", publishedAt: "2026-11-27T10:00:00.000Z", updatedAt: "2026-11-27T10:00:00.000Z", isLatest: true });
  });

  it("clips description and title to 100 characters and falls back for an empty description", () => {
    const record = serverRecord(view({ description: "d".repeat(300), display_name: "🌦".repeat(120) }), "example.com")!;
    expect(serverResponseProblems(record)).toBe("");
    expect([...record.server.description]).toHaveLength(100);
    expect([...record.server.title!]).toHaveLength(100);
    expect(serverRecord(view({ description: "  " }), "example.com")!.server.description).toBe("weather");
    expect(clip("short", 100)).toBe("short");
  });

  it("offers an http(s) url as a streamable-http remote, and nothing for any other", () => {
    expect(remotesOf("https://mcp.example.com/mcp")).toEqual([{ type: "streamable-http", url: "https://mcp.example.com/mcp" }]);
    expect(remotesOf("http://127.0.0.1:8080/mcp")).toHaveLength(1);
    for (const url of [undefined, "nats://demo.nats.io", "not a url", "file:///etc/passwd"]) expect(remotesOf(url), String(url)).toBeUndefined();
    expect(serverResponseProblems(serverRecord(view({ url: "https://mcp.example.com/mcp" }), "example.com"))).toBe("");
  });
});

describe("the list query", () => {
  it("takes the defaults, latest as no version filter, and an exact version", () => {
    expect(query("")).toEqual({ limit: 30, search: undefined, version: undefined, updatedSince: undefined, start: { cursor: null, skip: 0 } });
    expect(query("version=latest&limit=100&search=Weath").version).toBeUndefined();
    expect(query("search=Weath").search).toBe("weath");
    expect(query("version=1.0.0").version).toBe("1.0.0");
    expect(query("updated_since=2025-08-07T13:15:04.280Z").updatedSince).toBe(Date.parse("2025-08-07T13:15:04.280Z"));
    expect(query("updated_since=2025-08-07T15:15:04%2B02:00").updatedSince).toBe(Date.parse("2025-08-07T13:15:04Z"));
  });

  it("reads back the cursor it issued, for the same filters only", () => {
    const cursor = encodeServerCursor({ cursor: "reg-cursor", skip: 3 }, { search: "we", version: undefined, updatedSince: undefined });
    expect(query(`search=we&cursor=${cursor}`).start).toEqual({ cursor: "reg-cursor", skip: 3 });
    expect(invalid(() => query(`search=wx&cursor=${cursor}`))).toContain("other filters");
  });

  it.each(["limit=0", "limit=101", "limit=-1", "limit=1.5", "limit=", "cursor=%%%", "cursor=e30", "updated_since=2025-08-07", "updated_since=soon", "version=", `version=${"1".repeat(256)}`, `search=${"s".repeat(201)}`, "limit=1&limit=1", "page=2"])(
    "refuses %s",
    (text) => {
      invalid(() => query(text));
    },
  );
});
