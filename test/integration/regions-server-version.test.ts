/**
 * Regional mode refuses a server it cannot run on, with one line that says why and before it
 * stores anything: Debian's nats-server 2.9.10 (no subject transforms on sources), or a current
 * server outside the region's cluster. Single-cluster mode on the same 2.9.10 server still works.
 */
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { canControlNatsServers, serverSupportsRegions, withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, spec, startRegistry, testConfig } from "../harness/registry.js";

const DEBIAN_NATS = "/usr/sbin/nats-server";

/** Names of every stream on the server: what a refused start must not have created. */
async function streamNames(c: RawClient): Promise<string[]> {
  const jsm = await jetstreamManager(c.nc);
  const names: string[] = [];
  for await (const s of jsm.streams.list()) names.push(s.config.name);
  return names;
}

describe.runIf(existsSync(DEBIAN_NATS))("regional mode on nats-server 2.9.10", () => {
  let old: NatsServerHandle;
  beforeAll(async () => {
    old = await startNatsServer({ binary: DEBIAN_NATS });
  });
  afterAll(async () => old?.stop());

  it("refuses to start, in one line naming the version needed, and creates nothing", async () => {
    const config = testConfig(old.url, { region: "eu", regions: ["eu", "us"] });
    const start = startRegistry(old.url, {}, config);
    await expect(start).rejects.toThrow(/^regional mode \(REGISTRY_REGION=eu\) needs nats-server 2\.10\.0 or newer .* this server is 2\.9\.10[^\n]*$/);
    const c = await RawClient.connect(old.url, config.prefix);
    try {
      expect((await streamNames(c)).filter((n) => n.includes(config.bucket) || n.includes(config.eventsStream))).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("still serves in single-cluster mode", async () => {
    await using reg = await startRegistry(old.url);
    const config = (reg as unknown as { config: ReturnType<typeof testConfig> }).config;
    const c = await RawClient.connect(old.url, config.prefix);
    try {
      const r = await c.request("register.plain-old", { spec: spec("plain-old"), instance_id: "p1" });
      expect(r.ok).toBe(true);
      const found = await c.request("lookup", { capability: "plain-old.run", min_revision: r.body.revision });
      expect(found.body.providers.map((p: { agent_type: string; ready_instances: number }) => [p.agent_type, p.ready_instances])).toEqual([["plain-old", 1]]);
      // A v1.1 client sees no change outside regional mode: no region on providers, and any scope is the one region.
      expect(found.body.providers[0]).not.toHaveProperty("region");
      const scoped = await c.request("lookup", { capability: "plain-old.run", scope: "global" });
      expect(scoped.body.providers).toEqual(found.body.providers);
    } finally {
      await c.close();
    }
  });
});

// On a server before 2.10 the version refusal comes first (the describe above checks it).
describe.runIf(canControlNatsServers() && serverSupportsRegions())("regional mode outside the region's cluster", () => {
  let server: NatsTestServer;
  beforeAll(async () => {
    server = await withNatsServer();
  });
  afterAll(async () => server?.stop());

  it("refuses a server that is in no cluster", async () => {
    await expect(startRegistry(server.url, { region: "eu" })).rejects.toThrow(/needs a server of the NATS cluster named "eu"; this server is in no cluster/);
  });
});
