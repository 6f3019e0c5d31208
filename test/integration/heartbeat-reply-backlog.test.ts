/**
 * A heartbeat's reply gives way to a NATS connection already too far behind (endpoints.ts,
 * write-backlog.ts): the heartbeat is taken, no reply is queued behind the backlog, and the
 * outcome says so. The backlog is made by hand here, by shadowing the socket's
 * `writableLength`: a real one needs a nats-server that reads nothing while it still delivers
 * heartbeats, which test/fault/write-backlog.test.ts shows for the reading itself.
 */
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEndpoints } from "../../src/adapters/nats/endpoints.js";
import { writeBacklogBytes } from "../../src/adapters/nats/write-backlog.js";
import type { Registrar } from "../../src/service/registration/registrar.js";
import type { SchemaRegistrar } from "../../src/service/registration/schema-registrar.js";
import type { QueryService } from "../../src/service/queries/queries.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { captureLogs } from "../harness/registry.js";

const LIMIT = 1024 * 1024;

let server: NatsTestServer;
let registryNc: NatsConnection;
let agentNc: NatsConnection;
const taken: string[] = [];
const outcomes: string[] = [];

/** Makes the registry connection's socket report `bytes` unsent, or its real figure again (undefined). */
function pretendBacklog(bytes: number | undefined): void {
  const socket = (registryNc as unknown as { protocol: { transport: { socket: object } } }).protocol.transport.socket;
  if (bytes === undefined) delete (socket as { writableLength?: number }).writableLength;
  else Object.defineProperty(socket, "writableLength", { get: () => bytes, configurable: true });
}

beforeAll(async () => {
  server = await withNatsServer({ jetstream: false });
  registryNc = await connect({ servers: server.url });
  agentNc = await connect({ servers: server.url });
  const registrar = {
    heartbeat: (agentType: string, instanceId: string) => {
      taken.push(`${agentType}/${instanceId}`);
      return { status: "ready", revision: 7, last_heartbeat: new Date(0).toISOString() };
    },
  } as unknown as Registrar;
  await startEndpoints({
    nc: registryNc,
    prefix: "registry",
    version: "0.0.0",
    limits: { maxBytes: 65536, maxDepth: 32 },
    registrar,
    schemas: {} as SchemaRegistrar,
    queries: { cachedLookup: () => undefined } as unknown as QueryService,
    log: captureLogs().logger,
    observe: (endpoint, outcome) => outcomes.push(`${endpoint}:${outcome}`),
    replyBacklogLimitBytes: LIMIT,
  });
  await registryNc.flush();
});

afterAll(async () => {
  await agentNc?.close();
  await registryNc?.close();
  await server?.stop();
});

describe("a heartbeat's reply on a connection too far behind", () => {
  it("is dropped, the heartbeat still taken and the outcome reply_dropped; answered again once the backlog is under the bound", async () => {
    const body = new TextEncoder().encode('{"status":"ready"}');
    expect((await agentNc.request("registry.heartbeat.alpha.i1", body, { timeout: 2000 })).json()).toMatchObject({ status: "ready", revision: 7 });
    expect(outcomes).toEqual(["heartbeat:ok"]);

    pretendBacklog(LIMIT + 1);
    try {
      expect(writeBacklogBytes(registryNc)).toBe(LIMIT + 1);
      await expect(agentNc.request("registry.heartbeat.alpha.i2", body, { timeout: 500 })).rejects.toThrow(/timeout/i);
    } finally {
      pretendBacklog(undefined);
    }
    expect(taken).toEqual(["alpha/i1", "alpha/i2"]);
    expect(outcomes).toEqual(["heartbeat:ok", "heartbeat:reply_dropped"]);

    // At the bound exactly, replies go out.
    pretendBacklog(LIMIT);
    try {
      expect((await agentNc.request("registry.heartbeat.alpha.i3", body, { timeout: 2000 })).json()).toMatchObject({ status: "ready" });
    } finally {
      pretendBacklog(undefined);
    }
    expect(outcomes.at(-1)).toBe("heartbeat:ok");
  });
});
