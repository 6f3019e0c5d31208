/**
 * Starts real registry replicas in-process against a test NATS server, with test-friendly
 * settings (short heartbeats and lease, free ports, logs captured as parsed JSON lines so tests
 * can assert on them), and a raw NATS client that speaks PROTOCOL.md like any other language would.
 */
import { Writable } from "node:stream";
import { connect } from "@nats-io/transport-node";
import type { Msg, NatsConnection } from "@nats-io/nats-core";
import { loadConfig, type ConfigInput } from "../../src/config/service.js";
import { createRegistry, type AgentRegistry } from "../../src/main.js";
import type { Logger } from "../../src/kit/logger.js";
import { createLogger, type LogLevel } from "../../src/kit/create-logger.js";

let bucketSeq = 0;

export type LogLine = { level: number; msg: string; component?: string; [k: string]: unknown };

/** A pino logger writing JSON lines into an array, censoring what the project's loggers censor. */
export function captureLogs(level: LogLevel = "debug"): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  return { logger: createLogger({ level, to: sink }), lines };
}

export type TestRegistry = AgentRegistry & { logs: LogLine[] } & AsyncDisposable;

/** Settings every test replica shares unless overridden; a unique bucket keeps files apart on one server. */
export function testConfig(natsUrl: string, overrides: ConfigInput = {}) {
  bucketSeq++;
  return loadConfig({}, {}, {
    natsUrl,
    embedded: "never",
    httpPort: 0,
    httpHost: "127.0.0.1",
    minHeartbeatIntervalMs: 100,
    leaseMs: 600,
    evictionTickMs: 50,
    logLevel: "debug",
    bucket: `reg-${process.pid}-${bucketSeq}`,
    eventsStream: `EV_${process.pid}_${bucketSeq}`,
    prefix: `t${process.pid}x${bucketSeq}.registry`,
    // The fault-memory project (vitest.config.ts) runs the same tests under memory liveness.
    ...(process.env["REGISTRY_LIVENESS"] === "memory" ? { liveness: "memory" as const } : {}),
    ...overrides,
  });
}

export async function startRegistry(natsUrl: string, overrides: ConfigInput = {}, config = testConfig(natsUrl, overrides)): Promise<TestRegistry> {
  const { logger, lines } = captureLogs();
  const registry = createRegistry({ config, logger });
  await registry.start();
  return Object.assign(registry, {
    logs: lines,
    config,
    [Symbol.asyncDispose]: () => registry.stop("test over"),
  }) as TestRegistry & { config: typeof config };
}

/** A raw NATS client speaking the wire protocol: JSON in, JSON or the error envelope out. */
export class RawClient {
  private constructor(readonly nc: NatsConnection, readonly prefix: string) {}

  /** `url` may be a comma-separated list (a cluster's nodes). */
  static async connect(url: string, prefix: string): Promise<RawClient> {
    return new RawClient(await connect({ servers: url.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 100 }), prefix);
  }

  async request(subject: string, body: unknown = {}, timeout = 5000): Promise<{ ok: boolean; status: number; body: any; msg: Msg }> {
    const data = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
    const msg = await this.nc.request(`${this.prefix}.${subject}`, data, { timeout });
    const code = msg.headers?.get("Nats-Service-Error-Code");
    const parsed = msg.data.length > 0 ? JSON.parse(new TextDecoder().decode(msg.data)) : null;
    return { ok: !code, status: code ? Number(code) : 200, body: parsed, msg };
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}

export function spec(agentType: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_type: agentType,
    version: "1.0.0",
    description: `${agentType} agent`,
    owner_team: "team-a",
    capabilities: [
      { name: `${agentType}.run`, description: `runs ${agentType}`, input_schema: { type: "object" }, output_schema: {} },
    ],
    nats_subject: `agent.tasks.${agentType}`,
    consumer_group: agentType,
    ...overrides,
  };
}

/**
 * The register subject (after the prefix) for a spec: its tenant's, `tenant.<t>.register.<type>`,
 * when it names a tenant_scope (v1.2: the plain subject takes none), else `register.<type>`.
 */
export function registerSubject(agentType: string, s: Record<string, unknown> = {}): string {
  const tenant = s["tenant_scope"];
  return typeof tenant === "string" ? `tenant.${tenant}.register.${agentType}` : `register.${agentType}`;
}

/** Every message stored in an events stream, in stream order, parsed (for exactly-once checks). */
export async function readStoredEvents(nc: NatsConnection, stream: string): Promise<Array<{ seq: number; subject: string; event: any }>> {
  const { jetstreamManager } = await import("@nats-io/jetstream");
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const out: Array<{ seq: number; subject: string; event: any }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
    if (m) out.push({ seq, subject: m.subject, event: m.json() });
  }
  return out;
}

/** The registry replica's config (tests need its prefix, bucket and stream names). */
export const configOf = (r: TestRegistry) => (r as unknown as { config: ReturnType<typeof testConfig> }).config;
