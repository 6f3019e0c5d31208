/**
 * ARD federation `auto` on the discovery front (docs/discovery.md, src/discovery/upstream-search.ts)
 * over real HTTP: a front whose configured upstream is another front (of another publisher, on
 * the same fleet) merges that front's ranked entries with its own, valid under the ARD schema;
 * upstreams that hang, answer too much, answer no JSON or redirect are left out and the search
 * still answers; two fronts naming each other do not ask each other in a loop; `none` and
 * `referrals` ask no upstream; pages walk the merged set and a token of one mode is refused in
 * the other.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ardSchemas, problems } from "../harness/ard-schemas.js";
import { startDiscoveryFleet, type DiscoveryFleet } from "../harness/discovery.js";
import { pickFreePort } from "../harness/ports.js";

type Result = { identifier: string; score: number; source: string; type: string };
type SearchBody = { results: Result[]; pageToken?: string; referrals?: unknown[] };

let fleet: DiscoveryFleet;
let front: string;
let upstream: string;
const odd: Server[] = [];
/** Requests the odd upstreams received: each one must have been asked (so leaving it out was its doing). */
const asked: string[] = [];

/** A loopback HTTP server that answers POST /search as `answer` says. */
async function oddUpstream(name: string, answer: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    asked.push(name);
    req.resume();
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  odd.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function search(base: string, body: unknown): Promise<SearchBody> {
  const res = await fetch(`${base}/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const parsed = (await res.json()) as SearchBody;
  expect(res.status, JSON.stringify(parsed)).toBe(200);
  expect(ardSchemas.searchResponse(parsed), problems(ardSchemas.searchResponse)).toBe(true);
  return parsed;
}

beforeAll(async () => {
  fleet = await startDiscoveryFleet();
  upstream = (await fleet.startFront({ publisher: "upstream.example.org" })).url;
  const hanging = await oddUpstream("hanging", () => undefined);
  const huge = await oddUpstream("huge", (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ results: [{ identifier: "urn:air:huge.example:shared:x", displayName: "x".repeat(200_000), type: "t", url: "https://huge.example/x", score: 100 }] }));
  });
  const notJson = await oddUpstream("not-json", (res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("<html>maintenance</html>");
  });
  const redirecting = await oddUpstream("redirecting", (res) => {
    res.writeHead(302, { location: `${upstream}/search` });
    res.end();
  });
  const referrals = [
    `urn:air:upstream.example.org:registry:shared=${upstream}/`,
    `urn:air:hanging.example:registry:shared=${hanging}`,
    `urn:air:huge.example:registry:shared=${huge}`,
    `urn:air:notjson.example:registry:shared=${notJson}`,
    `urn:air:redirecting.example:registry:shared=${redirecting}`,
  ].join(",");
  front = (await fleet.startFront({ referrals, federationTimeoutMs: 1000, federationMaxBytes: 65_536 })).url;
}, 60_000);

afterAll(async () => {
  for (const s of odd) s.closeAllConnections();
  await Promise.all(odd.map((s) => new Promise((resolve) => s.close(resolve))));
  await fleet?.stop();
});

describe("federation auto", () => {
  it("merges the upstream's ranked entries with this registry's, each with its source, and leaves out the upstreams that fail", async () => {
    asked.length = 0;
    const { results } = await search(front, { query: { text: "translate text" } });
    const ids = results.map((r) => r.identifier);
    // Ours first on a tie: both registries rank their translator best (100).
    expect(ids.slice(0, 2)).toEqual(["urn:air:example.com:shared:translator", "urn:air:upstream.example.org:shared:translator"]);
    expect(results[0]).toMatchObject({ score: 100, source: `${front}/` });
    expect(results[1]).toMatchObject({ score: 100, source: `${upstream}/` });
    expect(ids.filter((id) => id.startsWith("urn:air:upstream.example.org:")).length).toBe(ids.filter((id) => id.startsWith("urn:air:example.com:")).length);
    expect(ids.some((id) => id.includes("huge.example"))).toBe(false);
    expect(new Set(asked)).toEqual(new Set(["hanging", "huge", "not-json", "redirecting"]));
  });

  it("passes the filter upstream, where it applies to the upstream's own entries", async () => {
    const { results } = await search(front, { query: { text: "weather forecast", filter: { type: "application/mcp-server-card+json" } } });
    expect(results.map((r) => r.identifier)).toEqual(["urn:air:example.com:shared:weather", "urn:air:upstream.example.org:shared:weather"]);
  });

  it("pages through the merged set, and a token of a merged search is refused without federation", async () => {
    const all = (await search(front, { query: { text: "text documents" }, pageSize: 100 })).results.map((r) => r.identifier);
    expect(all.length).toBeGreaterThan(2);
    const walked: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await search(front, { query: { text: "text documents" }, pageSize: 1, ...(pageToken ? { pageToken } : {}) });
      walked.push(...page.results.map((r) => r.identifier));
      pageToken = page.pageToken;
    } while (pageToken !== undefined && walked.length < 50);
    expect(walked).toEqual(all);
    const first = await search(front, { query: { text: "text documents" }, pageSize: 1 });
    const res = await fetch(`${front}/search`, { method: "POST", body: JSON.stringify({ query: { text: "text documents" }, federation: "none", pageToken: first.pageToken }) });
    expect(res.status).toBe(400);
  });

  it("none and referrals ask no upstream", async () => {
    asked.length = 0;
    const none = await search(front, { query: { text: "translate text" }, federation: "none" });
    expect(none.results.every((r) => r.identifier.startsWith("urn:air:example.com:"))).toBe(true);
    const referred = await search(front, { query: { text: "translate text" }, federation: "referrals" });
    expect(referred.results.every((r) => r.identifier.startsWith("urn:air:example.com:"))).toBe(true);
    expect(referred.referrals).toHaveLength(5);
    expect(asked).toEqual([]);
  });

  it("two fronts naming each other answer once each: an upstream is asked with federation none", async () => {
    const port = await pickFreePort();
    const b = `http://127.0.0.1:${port}`;
    const a = (await fleet.startFront({ publisher: "a.example", referrals: `urn:air:b.example:registry:shared=${b}/` })).url;
    await fleet.startFront({ publisher: "b.example", httpPort: port, referrals: `urn:air:a.example:registry:shared=${a}/` });
    const ids = (await search(a, { query: { text: "translate text" } })).results.map((r) => r.identifier);
    expect(ids.slice(0, 2)).toEqual(["urn:air:a.example:shared:translator", "urn:air:b.example:shared:translator"]);
    // B's answer held only B's own entries (it did not ask A back), and A dropped none of them as its own.
    expect(ids.filter((id) => id.startsWith("urn:air:a.example:"))).toHaveLength(ids.filter((id) => id.startsWith("urn:air:b.example:")).length);
  });

  it("drops an upstream's entries of this registry's own publisher", async () => {
    const mirror = (await fleet.startFront({})).url;
    const withMirror = (await fleet.startFront({ referrals: `urn:air:mirror.example:registry:shared=${mirror}/` })).url;
    const ids = (await search(withMirror, { query: { text: "translate text" } })).results.map((r) => r.identifier);
    expect(ids).toEqual((await search(mirror, { query: { text: "translate text" }, federation: "none" })).results.map((r) => r.identifier));
  });
});
