/**
 * A real registry with a small fleet for the discovery front's tests: two shared A2A agents
 * (one with capability examples, one with representative_queries), a shared MCP server, and one
 * agent of the tenant `acme`; and fronts started in this process on port 0.
 */
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, RegistryClient, type AgentSpecInput } from "../../src/client/index.js";
import { loadDiscoveryConfig } from "../../src/config/discovery.js";
import { createDiscoveryServer, type DiscoveryServer } from "../../src/discovery/http-server.js";
import { silentLogger } from "../../src/kit/logger.js";
import { withNatsServer, type NatsTestServer } from "./nats.js";
import { configOf, spec, startRegistry, type TestRegistry } from "./registry.js";

export type DiscoveryFleet = {
  nc: NatsConnection;
  natsUrl: string;
  prefix: string;
  /** A front over this fleet with these settings (publisher example.com, port 0 unless given). */
  startFront(settings?: Record<string, unknown>): Promise<DiscoveryServer>;
  stop(): Promise<void>;
};

function capability(name: string, description: string, tags: string[], examples: string[] = []) {
  return { name, description, tags, examples, input_schema: { type: "object" }, output_schema: {} };
}

export async function startDiscoveryFleet(): Promise<DiscoveryFleet> {
  const server: NatsTestServer = await withNatsServer();
  const registry: TestRegistry = await startRegistry(server.url);
  const prefix = configOf(registry).prefix;
  const nc = await connect({ servers: server.url });
  const fronts: DiscoveryServer[] = [];
  const client = new RegistryClient(nc, { prefix });
  let revision = 0;
  const register = async (c: RegistryClient, s: Record<string, unknown>) => {
    revision = Math.max(revision, (await c.register({ spec: s as AgentSpecInput, heartbeat_interval_ms: 3_600_000 })).revision);
  };
  await register(
    client,
    spec("translator", {
      description: "translates documents between languages",
      capabilities: [capability("text.translate", "translates text between languages", ["language", "translation"], ["translate this email into French", "what is hello in Spanish"])],
    }),
  );
  await register(
    client,
    spec("summarizer", {
      description: "summarizes documents",
      representative_queries: ["give me the gist of the meeting notes", "shorten this report"],
      capabilities: [capability("text.summarize", "summarizes long documents and text", ["language"])],
    }),
  );
  await register(
    client,
    spec("weather", { kind: "mcp_server", description: "weather data", nats_subject: "mcp.tools.weather", capabilities: [capability("weather.forecast", "gets the weather forecast for a city", ["weather"])] }),
  );
  await register(
    new RegistryClient(nc, { prefix, tenant: "acme" }),
    spec("ledger", { tenant_scope: "acme", description: "keeps the books", capabilities: [capability("finance.ledger", "books ledger entries for translated text invoices", ["finance"])] }),
  );
  // The discovery front sends no min_revision: its queries see the fleet only once the view holds it.
  await client.discover({}, { minRevision: revision });
  return {
    nc,
    natsUrl: server.url,
    prefix,
    async startFront(settings = {}) {
      const config = loadDiscoveryConfig({}, {}, { httpPort: 0, publisher: "example.com", ...settings });
      const front = createDiscoveryServer({ config, nc, client: { prefix }, log: silentLogger });
      await front.listen();
      fronts.push(front);
      return front;
    },
    async stop() {
      await Promise.all(fronts.map((f) => f.close()));
      await nc.close();
      await registry.stop();
      await server.stop();
    },
  };
}
