/**
 * A start warns when the bucket keeps one value per key (REGISTRY_HISTORY 1, or an existing
 * bucket created so): a value overwritten before the watches read it is seen by no replica,
 * and the events of a replica that died cannot be recovered (docs/configuration.md, "Bucket
 * history"). The default history says nothing.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { Kvm } from "@nats-io/kv";
import { connect } from "@nats-io/transport-node";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { startRegistry, testConfig, type LogLine } from "../harness/registry.js";

const ONE_VALUE = /^the bucket keeps one value per key: a value overwritten before the replicas' watches read it is seen by none/;
const warnings = (logs: LogLine[], pattern: RegExp): LogLine[] => logs.filter((l) => l.level === 40 && pattern.test(l.msg));

let server: NatsTestServer;

beforeAll(async () => {
  server = await withNatsServer();
});
afterAll(async () => {
  await server?.stop();
});

it("warns at start when configured with history 1", async () => {
  const config = testConfig(server.url, { history: 1 });
  await using reg = await startRegistry(server.url, {}, config);
  const found = warnings(reg.logs, ONE_VALUE);
  expect(found).toHaveLength(1);
  expect(found[0]).toMatchObject({ bucket: config.bucket });
  expect(found[0]?.msg).toContain("REGISTRY_HISTORY, docs/configuration.md");
});

it("warns when an existing bucket keeps one value per key, whatever the setting", async () => {
  const config = testConfig(server.url);
  expect(config.history).toBe(4);
  const nc = await connect({ servers: server.url });
  try {
    await new Kvm(nc).create(config.bucket, { history: 1 });
  } finally {
    await nc.close();
  }
  await using reg = await startRegistry(server.url, {}, config);
  expect(warnings(reg.logs, /^bucket settings differ: history is 1, configured 4$/)).toHaveLength(1);
  expect(warnings(reg.logs, ONE_VALUE)).toHaveLength(1);
});

it("says nothing with the default history", async () => {
  await using reg = await startRegistry(server.url);
  expect(reg.logs.filter((l) => /one value per key|bucket settings differ/.test(l.msg))).toEqual([]);
});
