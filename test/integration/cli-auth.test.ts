/**
 * The CLI and the SDK with credentials, on a nats-server running deploy/nats/auth.conf and a
 * registry connected as user `registry`: an agent registers under its own user and inbox, an
 * operator lists and watches, a coordinator is refused a deregister with a readable message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { findNatsServerBinary, startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { connect, PermissionDeniedError, registerAgent, RegistryClient, type AgentHandle, type AgentSpecInput } from "../../src/client/index.js";
import { spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { ensureBuilt, runCli, spawnCli } from "../harness/cli.js";
import { AUTH_CONF, authPassword } from "../harness/auth-conf.js";


describe.skipIf(findNatsServerBinary() === null)("credentials under deploy/nats/auth.conf", () => {
  let server: NatsServerHandle;
  let registry: TestRegistry;
  let agentNc: NatsConnection;
  let agent: AgentHandle;
  const as = (user: string, inbox = true): Record<string, string> => ({
    NATS_URL: server.url,
    NATS_USER: user,
    NATS_PASSWORD: authPassword(user),
    ...(inbox ? { NATS_INBOX_PREFIX: `_INBOX_${user}` } : {}),
  });

  beforeAll(async () => {
    await ensureBuilt();
    server = await startNatsServer({ configText: AUTH_CONF, jetstream: true });
    // The subjects, bucket and stream of auth.conf are the defaults of src/config/service.ts.
    registry = await startRegistry(server.url, {
      prefix: "registry",
      bucket: "agent-registry",
      eventsStream: "REGISTRY_EVENTS",
      natsUser: "registry",
      natsPassword: authPassword("registry"),
    });
    agentNc = await connect({ servers: server.url, user: "agent-code-reviewer", pass: authPassword("agent-code-reviewer"), inboxPrefix: "_INBOX_code-reviewer" });
    const reviewer = spec("code-reviewer", { nats_subject: "agent.tasks.code-reviewer" }) as AgentSpecInput;
    agent = await registerAgent(agentNc, reviewer, { heartbeatIntervalMs: 1000 });
    // The CLI sends no min_revision: the operators' commands below run once the registry's view holds the agent.
    const operator = await connect({ servers: server.url, user: "operator", pass: authPassword("operator"), inboxPrefix: "_INBOX_operator" });
    try {
      await new RegistryClient(operator).get("code-reviewer", { minRevision: agent.registration.revision });
    } finally {
      await operator.close();
    }
  }, 180_000);

  afterAll(async () => {
    await agent?.close();
    await agentNc?.close();
    await registry?.stop();
    await server?.stop();
  });

  it("the SDK refuses at once to register an agent type that is not the user's own", async () => {
    const other = spec("bug-fixer", { nats_subject: "agent.tasks.bug-fixer" }) as AgentSpecInput;
    const err = await registerAgent(agentNc, other).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermissionDeniedError);
    expect((err as Error).message).toBe("permission denied: this NATS user may not publish to registry.register.bug-fixer");
  });

  it("an operator lists agents (flags) and watches events (environment variables)", async () => {
    const ls = await runCli(["ls", "--nats", server.url, "--user", "operator", "--password", authPassword("operator"), "--inbox-prefix", "_INBOX_operator"]);
    expect(ls.stderr).toBe("");
    expect(ls.code).toBe(0);
    expect(ls.stdout).toMatch(/^code-reviewer +1\.0\.0 +ready +1\/1 /m);

    const watch = spawnCli(["watch", "--since", "1h"], as("operator"));
    try {
      await watch.waitForLine(new RegExp(`agent\\.registered +code-reviewer +1\\.0\\.0 instance ${agent.instanceId} \\(first instance\\)`));
    } finally {
      expect(await watch.stop("SIGINT")).toBe(0);
    }
  });

  it("without its private inbox prefix, the operator gets a message saying what to set", async () => {
    const r = await runCli(["ls"], as("operator", false));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: permission denied: this NATS user may not subscribe to _INBOX\.\S+; .*--inbox-prefix.*NATS_INBOX_PREFIX/);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("a coordinator may query but not deregister: one readable line and exit code 1", async () => {
    const lookup = await runCli(["lookup", "code-reviewer.run"], as("coordinator"));
    expect(lookup.code).toBe(0);
    expect(lookup.stdout).toMatch(/^code-reviewer /m);

    const r = await runCli(["deregister", "code-reviewer"], as("coordinator"));
    expect(r).toMatchObject({ code: 1, stdout: "", stderr: "error: permission denied: this NATS user may not publish to registry.deregister.code-reviewer\n" });
    const watch = await runCli(["watch"], as("coordinator"));
    expect(watch.code).toBe(1);
    expect(watch.stderr).toMatch(/^error: permission denied: this NATS user may not publish to \$JS\.API\.\S+REGISTRY_EVENTS\n$/);

    // Nothing was removed.
    const operator = await connect({ servers: server.url, user: "operator", pass: authPassword("operator"), inboxPrefix: "_INBOX_operator" });
    try {
      const { agent: view } = await new RegistryClient(operator).get("code-reviewer");
      expect(view.instances.map((i) => i.instance_id)).toEqual([agent.instanceId]);
    } finally {
      await operator.close();
    }
  });

  it("wrong credentials: exit code 1 and a message about credentials, not an outage", async () => {
    const r = await runCli(["ls"], { ...as("operator"), NATS_PASSWORD: "wrong" });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: NATS at nats:\/\/\S+ refused the credentials \(Authorization Violation\); check --user\/--password/);
  });
});
