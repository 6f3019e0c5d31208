/**
 * A tenant's agent user is bound to its tenant (v1.2; docs/security.md, "Tenants"): on a real
 * nats-server running deploy/nats/auth.conf, with a registry connected as user `registry`,
 * tenant acme's agent user writes on acme's subjects only, the registry takes the tenant from
 * the subject, and neither NATS nor the registry lets that user's agent into another tenant,
 * nor lets its dependencies reach another tenant's agents. The shipped template is copied for
 * a second tenant (globex) the way docs/security.md says to add one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import {
  connect,
  InvalidRequestError,
  NotFoundError,
  PermissionDeniedError,
  registerAgent,
  RegistryClient,
  type AgentSpecInput,
  type RegisterRequest,
} from "../../src/client/index.js";
import { subjects } from "../../src/protocol/subjects.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";
import { AUTH_CONF, passwordsOf } from "../harness/auth-conf.js";

const S = subjects("registry");

/** globex's agent user: acme's template with the tenant and the type replaced, as the docs say. */
function withGlobexAgent(conf: string): string {
  const template = /^AGENT_ACME_INVOICES = \{[\s\S]*?^\}$/m.exec(conf)?.[0];
  if (template === undefined) throw new Error("no AGENT_ACME_INVOICES block in auth.conf");
  const globex = template.replace("AGENT_ACME_INVOICES", "AGENT_GLOBEX_LEDGER").replaceAll("registry.tenant.acme.", "registry.tenant.globex.").replaceAll("acme-invoices", "globex-ledger");
  return conf
    .replace(template, `${template}\n\n${globex}`)
    .replace(/users:\s*\[/, 'users: [\n    { user: "agent-globex-ledger", password: "globex-example-password", permissions: $AGENT_GLOBEX_LEDGER }');
}

const CONF = withGlobexAgent(AUTH_CONF);
const PASSWORDS = passwordsOf(CONF);

const agentSpec = (type: string, extra: Record<string, unknown> = {}) => spec(type, { nats_subject: `agent.tasks.${type}`, ...extra }) as AgentSpecInput;

describe.skipIf(findNatsServerBinary() === null)("tenant binding under deploy/nats/auth.conf", () => {
  let server: NatsServerHandle;
  let registry: TestRegistry;
  const conns: NatsConnection[] = [];
  let acmeNc: NatsConnection;
  /** acme's agent, through its own user and acme's subjects. */
  let acme: RegistryClient;
  /** An operator's views: shared, acme's, globex's. */
  let shared: RegistryClient;
  let acmeView: RegistryClient;
  let globexView: RegistryClient;

  const connectAs = async (user: string): Promise<NatsConnection> => {
    const pass = PASSWORDS.get(user);
    if (pass === undefined) throw new Error(`no user ${user}`);
    const nc = await connect({ servers: server.url, user, pass, inboxPrefix: `_INBOX_${user.replace(/^agent-/, "")}` });
    conns.push(nc);
    return nc;
  };

  /** Nothing of `agentType` in any view, as of `revision` (a write made after the refused ones). */
  const expectStoredNowhere = async (agentType: string, revision: number) => {
    for (const view of [shared, acmeView, globexView]) {
      await expect(view.get(agentType, { minRevision: revision }), `${agentType} in ${view.tenant ?? "shared"}`).rejects.toBeInstanceOf(NotFoundError);
    }
  };

  /** A harmless write by acme's agent, whose revision follows everything sent before it. */
  const marker = async () => (await acme.register({ spec: agentSpec("acme-invoices"), instance_id: "marker" })).revision;

  beforeAll(async () => {
    server = await startNatsServer({ configText: CONF, jetstream: true });
    // The subjects, bucket and stream of auth.conf are the defaults of src/config/service.ts.
    registry = await startRegistry(server.url, {
      prefix: "registry",
      bucket: "agent-registry",
      eventsStream: "REGISTRY_EVENTS",
      natsUser: "registry",
      natsPassword: PASSWORDS.get("registry")!,
      subjectPolicy: "agent.tasks.{agent_type}",
      // As deploy/ runs it: tenant agents only on their tenant's subjects.
      plainTenantScope: "refuse",
    });
    acmeNc = await connectAs("agent-acme-invoices");
    acme = new RegistryClient(acmeNc, { tenant: "acme" });
    const operator = await connectAs("operator");
    shared = new RegistryClient(operator);
    acmeView = new RegistryClient(operator, { tenant: "acme" });
    globexView = new RegistryClient(operator, { tenant: "globex" });
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(conns.map((nc) => nc.close()));
    await registry?.stop();
    await server?.stop();
  });

  it("(a) acme's agent user registers, heartbeats and deregisters on acme's subjects, and is stored with tenant_scope acme", async () => {
    const reply = await acme.register({ spec: agentSpec("acme-invoices"), instance_id: "inv-1" });
    // The heartbeat subject the agent is told is one its user may publish on.
    expect(reply.heartbeat_subject).toBe(S.heartbeat("acme-invoices", "inv-1", "acme"));
    const beat = await acmeNc.request(reply.heartbeat_subject, JSON.stringify({ status: "draining" }), { timeout: 5_000 });
    expect(beat.json()).toMatchObject({ status: "draining" });

    // The heartbeat's revision, not the registration's: the status below is the heartbeat's write.
    const { agent } = await acmeView.get("acme-invoices", { minRevision: beat.json<{ revision: number }>().revision });
    expect(agent.tenant_scope).toBe("acme");
    expect(agent.instances.find((i) => i.instance_id === "inv-1")?.status).toBe("draining");
    await expect(shared.get("acme-invoices")).rejects.toBeInstanceOf(NotFoundError);
    await expect(globexView.get("acme-invoices")).rejects.toBeInstanceOf(NotFoundError);

    expect(await acme.deregister("acme-invoices", "inv-1")).toMatchObject({ agent_type: "acme-invoices", instance_id: "inv-1" });

    // The SDK picks acme's subjects from the spec's own tenant_scope, and heartbeats there.
    const handle = await registerAgent(acmeNc, agentSpec("acme-invoices", { tenant_scope: "acme" }), { instanceId: "inv-2", heartbeatIntervalMs: 1000 });
    try {
      expect(handle.registration.heartbeat_subject).toBe(S.heartbeat("acme-invoices", "inv-2", "acme"));
      const failures: unknown[] = [];
      handle.on("heartbeat_failed", (e) => failures.push(e.error));
      await handle.setStatus("draining");
      expect(failures).toEqual([]);
      // The handle does not say the heartbeat's revision: wait for the view to show it.
      await waitFor(async () => (await acmeView.get("acme-invoices")).agent.instances.find((i) => i.instance_id === "inv-2")?.status === "draining", {
        message: "inv-2 draining in acme's view after setStatus",
      });
    } finally {
      await handle.close();
    }
    await expect(acme.heartbeat("acme-invoices", "inv-2")).rejects.toThrow(/not registered/);
  });

  it("(b) acme's agent user cannot register into tenant globex: NATS refuses, nothing is stored", async () => {
    const err = await new RegistryClient(acmeNc, { tenant: "globex" }).register({ spec: agentSpec("acme-invoices") }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect((err as Error).message).toBe(`permission denied: this NATS user may not publish to ${S.register("acme-invoices", "globex")}`);
    const sdk = await registerAgent(acmeNc, agentSpec("acme-invoices", { tenant_scope: "globex" })).catch((e: unknown) => e);
    expect(sdk).toBeInstanceOf(PermissionDeniedError);
    // Nor a type of globex's, on acme's subjects or globex's.
    expect(await acme.register({ spec: agentSpec("globex-ledger") }).catch((e: unknown) => e)).toBeInstanceOf(PermissionDeniedError);
    const revision = await marker();
    const { agent } = await acmeView.get("acme-invoices", { minRevision: revision });
    expect(agent.tenant_scope).toBe("acme");
    await expect(globexView.get("acme-invoices", { minRevision: revision })).rejects.toBeInstanceOf(NotFoundError);
    await expectStoredNowhere("globex-ledger", revision);
  });

  it("(c) the plain register subject is closed to acme's agent user, and takes no tenant_scope from anyone", async () => {
    const plain = new RegistryClient(acmeNc);
    for (const body of [{ spec: agentSpec("acme-invoices", { tenant_scope: "globex" }) }, { spec: agentSpec("acme-invoices") }] as RegisterRequest[]) {
      const err = await plain.register(body).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PermissionDeniedError);
      expect((err as Error).message).toBe(`permission denied: this NATS user may not publish to ${S.register("acme-invoices")}`);
    }
    // A shared agent's user may use the plain subject, but not to put its agent in a tenant.
    const reviewer = new RegistryClient(await connectAs("agent-code-reviewer"));
    const refused = await reviewer.register({ spec: agentSpec("code-reviewer", { tenant_scope: "globex" }) }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect((refused as InvalidRequestError).issues.map((i) => i.path)).toEqual(["spec.tenant_scope"]);
    const revision = await marker();
    await expectStoredNowhere("code-reviewer", revision);
    // As a shared agent it registers as before.
    const ok = await reviewer.register({ spec: agentSpec("code-reviewer") });
    expect(ok.heartbeat_subject).toBe(S.heartbeat("code-reviewer", ok.instance_id));
    expect((await shared.get("code-reviewer", { minRevision: ok.revision })).agent.tenant_scope).toBeNull();
  });

  it("(d) a spec naming tenant globex sent on acme's subject is refused with an error naming tenant_scope, nothing stored", async () => {
    const before = await marker();
    const err = await acme.register({ spec: agentSpec("acme-invoices", { version: "2.0.0", tenant_scope: "globex" }), instance_id: "inv-3" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRequestError);
    const e = err as InvalidRequestError;
    expect(e.message).toBe('spec.tenant_scope "globex" does not match the subject\'s tenant acme');
    expect(e.issues).toEqual([{ path: "spec.tenant_scope", message: "must be acme (the subject's tenant) or absent" }]);
    const revision = await marker();
    expect(revision).toBeGreaterThan(before);
    const { agent } = await acmeView.get("acme-invoices", { minRevision: revision });
    expect(agent).toMatchObject({ version: "1.0.0", tenant_scope: "acme" });
    expect(agent.instances.map((i) => i.instance_id)).not.toContain("inv-3");
    await expect(globexView.get("acme-invoices", { minRevision: revision })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("says at start when credentials are used but the plain subject still takes a tenant_scope (the compatible default)", async () => {
    const unbound = (r: TestRegistry) => r.logs.filter((l) => l.level === 40 && l.msg.startsWith("REGISTRY_PLAIN_TENANT_SCOPE=allow"));
    expect(unbound(registry)).toEqual([]);
    // A second replica of the same deployment, left at the default.
    const lax = await startRegistry(server.url, {
      prefix: "registry",
      bucket: "agent-registry",
      eventsStream: "REGISTRY_EVENTS",
      natsUser: "registry",
      natsPassword: PASSWORDS.get("registry")!,
      subjectPolicy: "agent.tasks.{agent_type}",
    });
    try {
      expect(unbound(lax)).toHaveLength(1);
    } finally {
      await lax.stop();
    }
  });

  it("(e) acme's agent's dependencies reach shared agents and acme's, never globex's: the reply warns missing", async () => {
    const globex = new RegistryClient(await connectAs("agent-globex-ledger"), { tenant: "globex" });
    const ledger = await globex.register({ spec: agentSpec("globex-ledger") });
    expect((await globexView.get("globex-ledger", { minRevision: ledger.revision })).agent.tenant_scope).toBe("globex");
    const reviewer = await new RegistryClient(await connectAs("agent-code-reviewer")).register({ spec: agentSpec("code-reviewer") });

    const depends = [
      { type: "agent", name: "globex-ledger", version: "1.0.0" },
      { type: "agent", name: "code-reviewer", version: "1.0.0" },
    ];
    await acmeView.get("code-reviewer", { minRevision: reviewer.revision });
    const reply = await acme.register({ spec: agentSpec("acme-invoices", { version: "1.1.0", depends }), instance_id: "inv-4" });
    expect(reply.warnings).toEqual(["depends.0: agent:globex-ledger@1.0.0 is missing"]);
    const graph = await acmeView.graph({ agent_type: "acme-invoices" }, { minRevision: reply.revision });
    expect(graph.nodes.find((n) => n.name === "globex-ledger")?.state).toBe("missing");
    expect(graph.nodes.find((n) => n.name === "code-reviewer")?.state).toBe("live");
  });
});
