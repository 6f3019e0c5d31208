/**
 * The heard fan-out over a real nats-server: two replicas on two connections, and a start
 * that must fail loudly when the server does not let the registry publish on the subject.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findNatsServerBinary, startNatsServer } from "../../src/adapters/nats/nats-server-process.js";
import { HeardFanout, natsHeardBus } from "../../src/service/liveness/heard-fanout.js";
import { silentLogger } from "../../src/kit/logger.js";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { waitFor } from "../harness/wait.js";

// Unique per run, so a shared NATS_URL server does not mix runs.
const ROOT = `registry._replica.heard${process.pid}`;

describe("HeardFanout on a real nats-server", () => {
  let server: NatsTestServer;
  const conns: NatsConnection[] = [];

  beforeAll(async () => {
    server = await withNatsServer({ jetstream: false });
  });

  afterAll(async () => {
    for (const nc of conns) await nc.close();
    await server?.stop();
  });

  it("delivers 1,000 entries noted by one replica to the other, active_tasks included", async () => {
    const [ncA, ncB] = [await connect({ servers: server.url }), await connect({ servers: server.url })];
    conns.push(ncA, ncB);
    const heardByA: string[] = [];
    const heardByB = new Map<string, number | undefined>();
    const lost: number[] = [];
    const sent: number[] = [];
    const a = new HeardFanout({
      bus: natsHeardBus(ncA, silentLogger),
      subjectRoot: ROOT,
      replica: "a",
      log: silentLogger,
      onHeard: (t, i) => heardByA.push(`${t}.${i}`),
      onBatchSent: (n) => sent.push(n),
      onBatchesLost: (n) => lost.push(n),
    });
    const b = new HeardFanout({
      bus: natsHeardBus(ncB, silentLogger),
      subjectRoot: ROOT,
      replica: "b",
      log: silentLogger,
      onHeard: (t, i, tasks) => heardByB.set(`${t}.${i}`, tasks),
      onBatchesLost: (n) => lost.push(n),
    });
    await Promise.all([a.start(), b.start()]);

    // Every third entry without active_tasks, as heartbeats that did not carry it.
    for (let i = 0; i < 1000; i++) a.note(`type-${i % 7}`, `inst-${i}`, i % 3 === 0 ? undefined : i);
    await waitFor(() => heardByB.size === 1000, { timeoutMs: 5000, message: "1,000 entries at b" });

    for (let i = 0; i < 1000; i++) expect(heardByB.get(`type-${i % 7}.inst-${i}`)).toBe(i % 3 === 0 ? undefined : i);
    expect(sent.reduce((x, y) => x + y, 0)).toBe(1000);
    expect(lost).toEqual([]);
    expect(heardByA).toEqual([]);
    expect(b.malformedLines).toBe(0);
    a.stop();
    b.stop();
  });
});

describe.skipIf(findNatsServerBinary() === null)("HeardFanout without permission on the subject", () => {
  // One user may subscribe but not publish on the fan-out, the other the reverse.
  const configText = `authorization {
  users: [
    { user: "nopub", password: "p", permissions: { publish: { deny: ["${ROOT}.>"] }, subscribe: { allow: ["${ROOT}.>", "_INBOX.>"] } } }
    { user: "nosub", password: "p", permissions: { publish: { allow: ["${ROOT}.>"] }, subscribe: { deny: ["${ROOT}.>"] } } }
  ]
}`;

  for (const user of ["nopub", "nosub"]) {
    it(`start() rejects with the hint (${user})`, async () => {
      await using server = await startNatsServer({ configText, jetstream: false });
      const nc = await connect({ servers: server.url, user, pass: "p" });
      try {
        const fanout = new HeardFanout({ bus: natsHeardBus(nc, silentLogger), subjectRoot: ROOT, replica: "a", log: silentLogger, onHeard: () => {} });
        await expect(fanout.start(1000)).rejects.toThrow(`probably a missing NATS permission: the registry needs publish and subscribe on ${ROOT}.>`);
        fanout.stop();
      } finally {
        await nc.close();
      }
    });
  }
});
