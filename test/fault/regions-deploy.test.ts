/**
 * The deploy files of the three-region supercluster are real: deploy/nats/regions/<region>.conf
 * run on loopback for every NATS service deploy/regions/docker-compose.yml lists (nine nodes,
 * three clusters joined by gateways; only addresses and paths rewritten, test/harness/
 * deploy-supercluster.ts), and one registry per region with the environment its compose service
 * sets (only NATS_URL and the ops port rewritten). An agent registered in one region is found
 * from the others with scope global, its region named; and each role's permissions hold: no
 * agent, operator or other region's registry can store events as a region or write its bucket.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { PermissionViolationError, connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary } from "../../src/adapters/nats/nats-server-process.js";
import { loadConfig } from "../../src/config/service.js";
import { startDeploySupercluster, regionsCompose, serviceEnv, type DeploySupercluster } from "../harness/deploy-supercluster.js";
import { canControlNatsServers, serverSupportsRegions } from "../harness/nats.js";
import { readStoredEvents, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { waitFor } from "../harness/wait.js";

const REGIONS = ["eu", "us", "ap"] as const;
type RegionName = (typeof REGIONS)[number];
const conf = (region: string) => readFileSync(new URL(`../../deploy/nats/regions/${region}.conf`, import.meta.url), "utf8");
/** user -> password of a region's config, read from the file so the test follows it. */
const passwords = (region: string) => new Map([...conf(region).matchAll(/user:\s*"([^"]+)",\s*password:\s*"([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
/** The private inbox prefix each role may read (roles.conf); the registry reads the default one. */
const INBOX: Record<string, string | undefined> = { "agent-code-reviewer": "_INBOX_code-reviewer", coordinator: "_INBOX_coordinator", operator: "_INBOX_operator" };

type Client = { nc: NatsConnection; violations: PermissionViolationError[] };

describe.runIf(canControlNatsServers() && serverSupportsRegions())("regions: the deploy files of three regions", () => {
  let sc: DeploySupercluster;
  const registries = new Map<RegionName, TestRegistry>();
  const clients: Client[] = [];

  /** A client of `region` logged in as `user` of that region's config. */
  async function connectAs(region: RegionName, user: string): Promise<Client> {
    const pass = passwords(region).get(user);
    if (pass === undefined) throw new Error(`no user ${user} in deploy/nats/regions/${region}.conf`);
    const inboxPrefix = INBOX[user];
    const nc = await connect({ servers: sc.url(region).split(","), user, pass, ...(inboxPrefix ? { inboxPrefix } : {}) });
    const client: Client = { nc, violations: [] };
    void (async () => {
      for await (const s of nc.status()) if (s.type === "error" && s.error instanceof PermissionViolationError) client.violations.push(s.error);
    })();
    clients.push(client);
    return client;
  }
  const request = async (c: Client, subject: string, body: unknown) => (await c.nc.request(subject, JSON.stringify(body), { timeout: 5_000 })).json<any>();
  /** The server refuses `subject` to this client: it says so, and a subscriber with the rights hears nothing. */
  async function expectRefused(c: Client, subject: string): Promise<void> {
    c.nc.publish(subject, "{}");
    await waitFor(() => c.violations.some((v) => v.operation === "publish" && v.subject === subject), { timeoutMs: 5_000, message: `a permission violation on ${subject}` });
  }

  beforeAll(async () => {
    sc = await startDeploySupercluster(findNatsServerBinary()!);
    const services = regionsCompose().services;
    await Promise.all(
      REGIONS.map(async (region) => {
        const env = { ...serviceEnv(services[`registry-${region}-1`]!), NATS_URL: sc.url(region), REGISTRY_HTTP_HOST: "127.0.0.1", REGISTRY_HTTP_PORT: "0" };
        const config = loadConfig(env);
        registries.set(region, await startRegistry(config.natsUrl, {}, config));
      }),
    );
  }, 180_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.nc.close().catch(() => undefined)));
    await Promise.all([...registries.values()].map((r) => r.stop("test over")));
    await sc?.stop();
  });

  it("nats-server accepts every region's config as written and as run on loopback", async () => {
    const run = promisify(execFile);
    for (const node of sc.nodes) {
      const env = { ...process.env, NATS_SERVER_NAME: node.name };
      for (const file of [new URL(`../../deploy/nats/regions/${node.region}.conf`, import.meta.url).pathname, sc.configFile(node)]) {
        const { stdout, stderr } = await run(findNatsServerBinary()!, ["-t", "-c", file], { env });
        expect(`${stdout}${stderr}`).toMatch(/configuration file .* is valid/);
      }
    }
  });

  it("runs each region's registry in its own region with the stores the compose env names", () => {
    for (const region of REGIONS) {
      const config = (registries.get(region) as unknown as { config: ReturnType<typeof loadConfig> }).config;
      expect(config.region).toBe(region);
      expect(config.regions).toEqual([...REGIONS]);
      expect(config.replicas).toBe(3);
    }
  });

  it("an agent registered in eu is found from us and ap with scope global, its region named", async () => {
    const agent = await connectAs("eu", "agent-code-reviewer");
    const reply = await request(agent, "registry.register.code-reviewer", { spec: spec("code-reviewer"), instance_id: "cr-eu-1" });
    expect(reply.revision, JSON.stringify(reply)).toEqual(expect.any(Number));
    for (const region of ["us", "ap"] as const) {
      const coordinator = await connectAs(region, "coordinator");
      let providers: Array<{ agent_type: string; region: string; stale?: boolean }> = [];
      await waitFor(
        async () => {
          providers = (await request(coordinator, "registry.lookup", { capability: "code-reviewer.run", scope: "global" })).providers ?? [];
          return providers.length > 0;
        },
        { timeoutMs: 30_000, intervalMs: 250, message: `a coordinator in ${region} finds eu's agent` },
      );
      expect(providers.map((p) => `${p.agent_type}@${p.region}${p.stale === true ? " (stale)" : ""}`)).toEqual(["code-reviewer@eu"]);
      // Its own region holds none of it: scope local finds nothing there.
      expect((await request(coordinator, "registry.lookup", { capability: "code-reviewer.run", scope: "local" })).providers).toEqual([]);
    }
    // eu's registry stored the event under eu's own subjects, which only its user may publish.
    const registry = await connectAs("eu", "registry");
    const stored = await readStoredEvents(registry.nc, "REGISTRY_EVENTS_eu");
    expect(stored.map((e) => e.subject)).toContain("_region.eu.registry.agent.registered.code-reviewer");
  });

  it("lets no role store events as a region it is not, nor write another region's bucket", async () => {
    const agent = await connectAs("eu", "agent-code-reviewer");
    for (const subject of ["_region.us.registry.agent.registered.forged", "_region.eu.registry.agent.registered.forged", "$KV.agent-registry-eu.forged"]) {
      await expectRefused(agent, subject);
    }
    // A region's registry writes its own region only.
    const registry = await connectAs("eu", "registry");
    for (const subject of ["_region.us.registry.agent.registered.forged", "_region.ap.registry.agent.deregistered.forged", "$KV.agent-registry-us.forged"]) {
      await expectRefused(registry, subject);
    }
    const operator = await connectAs("ap", "operator");
    for (const subject of ["_region.ap.registry.agent.registered.forged", "$JS.API.STREAM.INFO.REGISTRY_EVENTS_ap", "registry.register.code-reviewer"]) {
      await expectRefused(operator, subject);
    }
    const coordinator = await connectAs("us", "coordinator");
    for (const subject of ["registry.register.code-reviewer", "registry.heartbeat.code-reviewer.cr-eu-1", "_region.us.registry.agent.registered.forged"]) {
      await expectRefused(coordinator, subject);
    }
    // Nothing forged reached a stream: every stored event of every region is its registry's own.
    for (const region of REGIONS) {
      const own = await connectAs(region, "registry");
      const stored = await readStoredEvents(own.nc, `REGISTRY_EVENTS_${region}`);
      expect(stored.filter((e) => e.subject.endsWith(".forged"))).toEqual([]);
      expect(stored.every((e) => e.subject.startsWith(`_region.${region}.registry.`))).toBe(true);
    }
  });

  it("gives each registry every subject it uses: no permission error in any region's logs", () => {
    for (const [region, registry] of registries) {
      const errors = registry.logs.filter((l) => l.msg === "NATS error" || /permission/i.test(JSON.stringify(l)));
      expect(errors, region).toEqual([]);
    }
  });
});
