/**
 * `discovery`: the fleet over open HTTP discovery standards (docs/discovery.md): ARD's
 * registry API (POST /search, POST /explore, GET /agents, entries by URN) and /.well-known/ai-catalog.json,
 * answered through the same NATS queries as any client. Logs are JSON lines on stderr.
 */
import { ConfigError } from "../../config/load.js";
import { DISCOVERY_VARIABLES, loadDiscoveryConfig } from "../../config/discovery.js";
import { ExitCode, UsageError, type Command, type OptionSpec } from "../context.js";

const flagDoc = (flag: (typeof DISCOVERY_VARIABLES)[number]["flag"]): string => {
  const v = DISCOVERY_VARIABLES.find((c) => c.flag === flag)!;
  return `${v.doc} (env ${v.env}${v.default !== undefined ? `, default ${String(v.default)}` : ""})`;
};

const options: Record<string, OptionSpec> = Object.fromEntries(
  DISCOVERY_VARIABLES.map((v) => [
    v.flag,
    { type: "string", ...(v.flag === "referral" ? { multiple: true } : {}), value: v.flag === "http-token" ? "TOKEN" : v.flag === "referral" ? "URN=URL" : "VALUE", description: flagDoc(v.flag) } satisfies OptionSpec,
  ]),
);

export const discoveryCommand: Command = {
  name: "discovery",
  summary: "serve the fleet to ARD and ai-catalog clients over HTTP: POST /search, POST /explore, GET /agents, /.well-known/ai-catalog.json (read-only)",
  usage: "discovery [--http-port PORT] [--http-host HOST] [--public-url URL] [--publisher DOMAIN] [--http-token TOKEN]",
  examples: [
    "agent-registry discovery --publisher example.com --public-url https://agents.example.com",
    "REGISTRY_DISCOVERY_TOKEN=s3cret agent-registry discovery --http-host 0.0.0.0 --http-port 8090",
  ],
  options,
  args: { min: 0, max: 0 },
  async run(ctx) {
    let config;
    try {
      config = loadDiscoveryConfig(ctx.values, ctx.io.env);
    } catch (e) {
      if (e instanceof ConfigError) throw new UsageError(e.problems.join("; "));
      throw e;
    }
    const [{ createLogger }, { createDiscoveryServer }] = await Promise.all([import("../../kit/create-logger.js"), import("../../discovery/http-server.js")]);
    const log = createLogger({ level: config.logLevel, base: { component: "discovery" }, to: "stderr" });
    const server = createDiscoveryServer({
      config,
      nc: await ctx.nc(),
      client: { ...(ctx.prefix ? { prefix: ctx.prefix } : {}), timeoutMs: ctx.timeoutMs },
      defaultTenant: ctx.tenant,
      log,
    });
    const port = await server.listen();
    // Not `token`, which the loggers censor whatever it holds.
    log.info({ port, url: server.url, publisher: config.publisher, auth: config.token === undefined ? "off" : "token", tenant: ctx.tenant ?? null }, `discovery API at ${server.url}`);
    if (config.token === undefined && config.httpHost !== "127.0.0.1" && config.httpHost !== "localhost") {
      log.warn({ host: config.httpHost }, "the discovery API is reachable from other machines without a bearer token; set REGISTRY_DISCOVERY_TOKEN if the fleet is not public");
    }
    try {
      await ctx.io.interrupted();
    } finally {
      await server.close();
    }
    return ExitCode.Ok;
  },
};
