/**
 * `serve` with REGISTRY_MCP_HTTP_PORT (PROTOCOL.md section 13): the registry process serves the
 * MCP endpoint beside its API, driven here by the MCP SDK's own client over Streamable HTTP,
 * with the token it was given; a registration shows in the next answer; with
 * REGISTRY_MCP_HTTP_SESSIONS, a subscribed session hears of it.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { call, mcpOverHttp } from "../harness/mcp.js";
import { waitFor } from "../harness/wait.js";

/** The URL of the MCP endpoint a registry serves, from its log line once it is up. */
async function mcpEndpointOf(reg: TestRegistry): Promise<string> {
  let url = "";
  await waitFor(() => (url = String(reg.logs.find((l) => l.component === "mcp" && typeof l["url"] === "string")?.["url"] ?? "")) !== "", {
    message: "the MCP endpoint's log line",
  });
  return url;
}

let server: NatsTestServer;
let registry: TestRegistry;
let nc: NatsConnection;
let url = "";

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url, { mcpHttpPort: 0, mcpToken: "serve-token" });
  url = await mcpEndpointOf(registry);
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  await nc?.close();
  await registry?.stop();
  await server?.stop();
});

describe("serve with an MCP endpoint", () => {
  it("answers the SDK's client with the bearer token, from the registry's own view", async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const mcp = await mcpOverHttp(url, { authorization: "Bearer serve-token" });
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("tasks_delegate");
      const client = new RegistryClient(nc, { prefix: configOf(registry).prefix });
      await client.register({ spec: spec("planner") as AgentSpecInput, heartbeat_interval_ms: 3_600_000 });
      // The tools take no min_revision: wait until the view has applied the registration.
      let providers: string[] = [];
      await waitFor(async () => {
        const lookup = await call(mcp.client, "capability_lookup", { capability: "planner.run" });
        providers = lookup.body.providers.map((p: { agent_type: string }) => p.agent_type);
        return providers.length > 0;
      });
      expect(providers).toEqual(["planner"]);
      expect((await call(mcp.client, "registry_health")).body).toMatchObject({ healthy: true, agents: 1, ready_agents: 1 });
    } finally {
      await mcp.close();
    }
    await expect(mcpOverHttp(url)).rejects.toThrow();
  });

  it("never logs the token", () => {
    expect(JSON.stringify(registry.logs)).not.toContain("serve-token");
  });
});

describe("serve with an MCP endpoint under deploy/nats/auth.conf", () => {
  it("answers queries as the registry's own user, whose role may publish them", async () => {
    const authConf = readFileSync(new URL("../../deploy/nats/auth.conf", import.meta.url), "utf8");
    const password = /user:\s*"registry",\s*password:\s*"([^"]+)"/.exec(authConf)?.[1];
    expect(password).toBeDefined();
    // The file assumes the default prefix, bucket and stream, which tests otherwise make unique;
    // this server is the test's own.
    const secured = await withNatsServer({ configText: authConf, jetstream: true });
    const guarded = await startRegistry(secured.url, { mcpHttpPort: 0, natsUser: "registry", natsPassword: password, prefix: "registry", bucket: "agent-registry", eventsStream: "REGISTRY_EVENTS" });
    try {
      const endpoint = await mcpEndpointOf(guarded);
      const mcp = await mcpOverHttp(endpoint);
      try {
        // Every query tool, each of which asks the API over NATS: none may meet a permission violation.
        expect((await call(mcp.client, "registry_health")).body).toMatchObject({ healthy: true, agents: 0 });
        expect((await call(mcp.client, "capability_lookup", { capability: "planner.run" })).body).toMatchObject({ providers: [] });
        expect((await call(mcp.client, "agents_discover", {})).body).toMatchObject({ agents: [] });
        expect((await call(mcp.client, "agent_card", { agent_type: "planner" })).body).toMatchObject({ error: { code: "not_found" } });
      } finally {
        await mcp.close();
      }
      expect(guarded.logs.filter((l) => /permission/i.test(JSON.stringify(l))).map((l) => JSON.stringify(l).slice(0, 600))).toEqual([]);
    } finally {
      await guarded.stop();
      await secured.stop();
    }
  });
});

describe("serve with MCP sessions (REGISTRY_MCP_HTTP_SESSIONS)", () => {
  it("sends a subscribed session resource updates when an agent registers", async () => {
    const stateful = await startRegistry(server.url, { mcpHttpPort: 0, mcpHttpSessions: true, mcpMaxSessions: 5 });
    try {
      const endpoint = await mcpEndpointOf(stateful);
      const mcp = await mcpOverHttp(endpoint);
      try {
        const updates: string[] = [];
        mcp.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
          updates.push(n.params.uri);
        });
        expect(mcp.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
        await mcp.client.subscribeResource({ uri: "registry://capabilities" });
        const client = new RegistryClient(nc, { prefix: configOf(stateful).prefix });
        await client.register({ spec: spec("notifier") as AgentSpecInput, heartbeat_interval_ms: 3_600_000 });
        await waitFor(() => updates.length > 0, { timeoutMs: 10_000, message: "a resources/updated notification" });
        expect(updates[0]).toBe("registry://capabilities");
      } finally {
        await mcp.close();
      }
    } finally {
      await stateful.stop();
    }
  });
});
