/**
 * A component that dies by itself must not leave the replica "up". Here the server takes the
 * API's subscriptions away (a permissions change reloaded into nats-server); nats.js keeps the
 * queue subscriptions as if nothing happened, so the replica would answer nothing while
 * /readyz said ready. It must notice, leave /readyz, and stop.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, expect, it } from "vitest";
import { startNatsServer, type NatsServerHandle } from "../../src/adapters/nats/nats-server-process.js";
import { startRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const ALL = `authorization { users: [ { user: "registry", password: "pw", permissions: { publish: ">", subscribe: ">" } } ] }`;

let server: NatsServerHandle | undefined;
afterAll(async () => {
  await server?.stop();
});

/** The config file the server was started with (`-c <path>` on its command line). */
function configPath(pid: number): string {
  const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  const path = args[args.indexOf("-c") + 1];
  if (!path) throw new Error(`no -c in ${args.join(" ")}`);
  return path;
}

it("stops the replica when its API endpoints stop by themselves", async () => {
  server = await startNatsServer({ jetstream: true, configText: ALL });
  const registry = await startRegistry(server.url, { natsUser: "registry", natsPassword: "pw" });
  try {
    expect(registry.health().ready).toBe(true);
    const prefix = (registry as unknown as { config: { prefix: string } }).config.prefix;
    const path = configPath(server.pid);
    const denied = ALL.replace('subscribe: ">"', `subscribe: { allow: ">", deny: ["${prefix}.>", "$SRV.>"] }`);
    writeFileSync(path, readFileSync(path, "utf8").replace(ALL, denied));
    process.kill(server.pid, "SIGHUP");
    await waitFor(() => registry.state === "stopped", { timeoutMs: 20_000, message: "the replica stops" });
    expect(registry.health().ready).toBe(false);
    const fatal = registry.logs.filter((l) => l.level === 50 && / took away the subscription to .*; stopping$/.test(l.msg));
    expect(fatal.length).toBeGreaterThan(0);
  } finally {
    await registry.stop();
  }
});
