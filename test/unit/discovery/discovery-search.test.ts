/**
 * How `POST /search` reads its entries from the registry: one `search`, then one `list` naming
 * the page's agent types (protocol v1.2), never a `get` each; and against a v1.1 registry, which
 * ignores `agent_types` and lists its fleet, a `get` each as before. A scripted client stands in
 * for the registry, counting what the front asks it.
 */
import { describe, expect, it } from "vitest";
import type { RegistryClient } from "../../../src/client/registry-client.js";
import { search, type Scope } from "../../../src/discovery/discovery-api.js";
import { parseSearchRequest } from "../../../src/discovery/search-request.js";
import type { AgentView, ListRequest } from "../../../src/protocol/messages.js";

const links = { publisher: "example.com", baseUrl: "https://agents.example.com" };

function view(agentType: string, status: AgentView["status"] = "ready"): AgentView {
  return {
    agent_type: agentType,
    version: "1.0.0",
    description: `the ${agentType} agent`,
    kind: "agent",
    tenant_scope: null,
    status,
    registered_at: "2026-11-27T10:00:00.000Z",
    instance_count: 1,
    capabilities: [{ name: `${agentType}.run`, description: "", tags: ["text"], examples: [], input_schema: {}, output_schema: {} }],
  } as unknown as AgentView;
}

/** A registry of these agents, whose search ranks them in the given order. */
function scriptedRegistry(fleet: AgentView[], opts: { listKnowsAgentTypes: boolean }) {
  const asked = { search: 0, list: [] as ListRequest[], get: [] as string[] };
  const byType = new Map(fleet.map((a) => [a.agent_type, a]));
  const client = {
    search: async () => {
      asked.search++;
      return { results: fleet.map((a, i) => ({ agent_type: a.agent_type, capability: `${a.agent_type}.run`, score: 10 - i })), revision: 7 };
    },
    list: async (req: ListRequest) => {
      asked.list.push(req);
      const live = (a: AgentView) => (req.status ?? ["registered", "ready", "draining"]).includes(a.status);
      const named = opts.listKnowsAgentTypes && req.agent_types ? fleet.filter((a) => req.agent_types!.includes(a.agent_type)) : fleet;
      const agents = named.filter(live).sort((a, b) => (a.agent_type < b.agent_type ? -1 : 1));
      return { agents, next_cursor: null, revision: 7 };
    },
    get: async (req: { agent_type: string }) => {
      asked.get.push(req.agent_type);
      const agent = byType.get(req.agent_type);
      if (!agent) throw Object.assign(new Error("not found"), { code: "not_found" });
      return { agent, revision: 7 };
    },
  };
  const scope: Scope = { client: client as unknown as RegistryClient, tenant: null, links };
  return { scope, asked };
}

const request = (pageSize = 10) => parseSearchRequest({ query: { text: "run text" }, pageSize });

describe("POST /search reads a page's entries", () => {
  const fleet = [view("zeta"), view("alpha"), view("gone", "deregistered"), view("mid")];

  it("from one list naming the page's agent types, in the search's rank order", async () => {
    const { scope, asked } = scriptedRegistry(fleet, { listKnowsAgentTypes: true });
    const page = await search(scope, request());
    expect(page.results.map((r) => r.identifier)).toEqual(["urn:air:example.com:shared:zeta", "urn:air:example.com:shared:alpha", "urn:air:example.com:shared:mid"]);
    expect(asked.search).toBe(1);
    expect(asked.list).toHaveLength(1);
    expect(asked.list[0]).toMatchObject({ agent_types: ["zeta", "alpha", "gone", "mid"], instances_limit: 1 });
    expect(asked.get).toEqual([]);
  });

  it("one list for a page of a filtered search too, the filter reading the same views", async () => {
    const { scope, asked } = scriptedRegistry(fleet, { listKnowsAgentTypes: true });
    const page = await search(scope, parseSearchRequest({ query: { text: "run text", filter: { "metadata.status": ["ready"] } }, pageSize: 2 }));
    expect(page.results).toHaveLength(2);
    expect(page.pageToken).toBeDefined();
    expect(asked.list).toHaveLength(1);
    expect(asked.get).toEqual([]);
  });

  it("from a get each when the registry (v1.1) ignores agent_types and lists agents it was not asked for", async () => {
    const { scope, asked } = scriptedRegistry(fleet, { listKnowsAgentTypes: false });
    const page = await search(scope, request(2));
    expect(page.results.map((r) => r.identifier)).toEqual(["urn:air:example.com:shared:zeta", "urn:air:example.com:shared:alpha"]);
    expect(asked.list).toHaveLength(1);
    expect(asked.get.sort()).toEqual(["alpha", "zeta"]);
  });
});
