/**
 * Trust roots in the bucket under deploy/nats/auth.conf, on a real registry: the operator sets
 * acme's roots through the SDK and the registry, as its own NATS user, stores them and publishes
 * `registry.trust.roots_changed` (the operator sees it live); acme's agent user and coordinator
 * are refused set, get and delete by NATS, and nothing they sent changed the stored entry.
 */
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { PermissionDeniedError, type RegistryEvent, type TenantTrustEntry } from "../../src/client/index.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { AUTH_CONF, AuthConfUsers, authPassword } from "../harness/auth-conf.js";


function entry(kid: string): TenantTrustEntry {
  const { publicKey } = generateKeyPairSync("ed25519");
  return {
    mode: "require",
    jwks: { keys: [{ ...publicKey.export({ format: "jwk" }), kid, alg: "EdDSA" }] },
    signers: [{ kid, publisher: "Acme", agent_types: ["acme-*"] }],
  };
}

describe.skipIf(findNatsServerBinary() === null)("trust roots in the bucket under deploy/nats/auth.conf", () => {
  let server: NatsServerHandle;
  let registry: TestRegistry;
  const events: RegistryEvent[] = [];

  const users = new AuthConfUsers(() => server.url);
  const as = (user: string, tenant?: string) => users.as(user, tenant);

  beforeAll(async () => {
    server = await startNatsServer({ configText: AUTH_CONF, jetstream: true });
    registry = await startRegistry(server.url, {
      prefix: "registry",
      bucket: "agent-registry",
      eventsStream: "REGISTRY_EVENTS",
      natsUser: "registry",
      natsPassword: authPassword("registry"),
    });
  }, 120_000);

  afterAll(async () => {
    await users.close();
    await registry?.stop();
    await server?.stop();
  });

  it("the operator sets acme's roots; acme's agent and coordinator are refused by NATS", { timeout: 60_000 }, async () => {
    const operator = await as("operator");
    const watch = users.conns.at(-1)!.subscribe("registry.trust.roots_changed.>");
    void (async () => {
      for await (const m of watch) events.push(m.json<RegistryEvent>());
    })();
    await users.conns.at(-1)!.flush();
    const set = await operator.setTrustRoots("acme", { trust: entry("acme-1"), by: "alice", revision: 0 });
    expect(set).toMatchObject({ tenant: "acme", by: "alice", in_force: "bucket" });
    await waitFor(() => events.length === 1, { timeoutMs: 10_000, message: "the operator saw no roots_changed event" });
    expect(events[0]).toMatchObject({ type: "registry.trust.roots_changed", subject: "acme", data: { tenant: "acme", change: "set", kids: ["acme-1"], by: "alice", revision: set.revision } });

    const agent = await as("agent-acme-invoices", "acme");
    const coordinator = await as("coordinator-acme", "acme");
    for (const client of [agent, coordinator]) {
      await expect(client.setTrustRoots("acme", { trust: entry("impostor") })).rejects.toBeInstanceOf(PermissionDeniedError);
      await expect(client.getTrustRoots("acme")).rejects.toBeInstanceOf(PermissionDeniedError);
      await expect(client.deleteTrustRoots("acme")).rejects.toBeInstanceOf(PermissionDeniedError);
    }
    // Still the operator's entry, and acme now requires signatures: the agent's unsigned spec is refused.
    const got = await operator.getTrustRoots("acme");
    expect(got).toMatchObject({ revision: set.revision, by: "alice", in_force: "bucket" });
    expect(got.trust?.jwks?.keys.map((k) => k["kid"])).toEqual(["acme-1"]);
    await waitFor(
      () => agent.register({ spec: spec("acme-invoices", { tenant_scope: "acme" }) as never, instance_id: "inv-1" }).then(() => false, (e: Error) => /signature_required/.test(e.message)),
      { timeoutMs: 10_000, message: "acme's unsigned registration was not refused" },
    );
  });
});
