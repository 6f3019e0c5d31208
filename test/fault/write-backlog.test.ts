/**
 * A NATS server that stops reading the registry's output (here SIGSTOP; in fleet-1m a server
 * short of CPU): nats.js keeps every publish on its socket, and the process must see that
 * backlog and let best-effort messages give way (src/adapters/nats/write-backlog.ts).
 */
import { connect } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { canReadWriteBacklog, giveWayPublisher, writeBacklogBytes } from "../../src/adapters/nats/write-backlog.js";
import { canControlNatsServers, withNatsServer } from "../harness/nats.js";
import { waitFor } from "../harness/wait.js";

const MESSAGE_BYTES = 64 * 1024;
const LIMIT_BYTES = 1024 * 1024;
/** Far more than the loopback socket's kernel buffers (a few MB) can hold. */
const MESSAGES = 512;

describe("the NATS connection's write backlog", () => {
  it.runIf(canControlNatsServers())("is read from a real connection, and what gives way to it is dropped and counted, never lost silently", async () => {
    await using server = await withNatsServer({ jetstream: false });
    const publisher = await connect({ servers: server.url });
    const subscriber = await connect({ servers: server.url });
    try {
      let received = 0;
      subscriber.subscribe("backlog.test", {
        callback: () => {
          received++;
        },
      });
      await subscriber.flush();
      expect(canReadWriteBacklog(publisher)).toBe(true);
      await publisher.flush();
      expect(writeBacklogBytes(publisher)).toBe(0);

      let dropped = 0;
      const publish = giveWayPublisher(publisher, () => dropped++, LIMIT_BYTES);
      const payload = new Uint8Array(MESSAGE_BYTES).fill(0x61);
      const pid = (server as unknown as { pid: number }).pid;
      process.kill(pid, "SIGSTOP");
      let peak = 0;
      try {
        for (let i = 0; i < MESSAGES; i++) {
          publish("backlog.test", payload);
          // nats.js hands its buffer to the socket a microtask after a publish.
          await Promise.resolve();
          await new Promise<void>((r) => setImmediate(r));
          peak = Math.max(peak, writeBacklogBytes(publisher));
        }
      } finally {
        process.kill(pid, "SIGCONT");
      }
      // The server stopped reading: the backlog passed the bound, and past it messages were dropped.
      expect(peak).toBeGreaterThan(LIMIT_BYTES);
      expect(dropped).toBeGreaterThan(0);
      // One message at most goes past the bound before the next is dropped.
      expect(peak).toBeLessThanOrEqual(LIMIT_BYTES + 2 * (MESSAGE_BYTES + 100));

      // Awake again: the backlog drains, every message not dropped arrives, and publishes pass again.
      await waitFor(() => writeBacklogBytes(publisher) === 0, { timeoutMs: 30_000, message: "the backlog never drained" });
      await publisher.flush();
      await waitFor(() => received === MESSAGES - dropped, { timeoutMs: 30_000, message: `received ${received} of ${MESSAGES - dropped}` });
      const before = dropped;
      publish("backlog.test", payload);
      await publisher.flush();
      expect(dropped).toBe(before);
      await waitFor(() => received === MESSAGES - dropped + 1, { timeoutMs: 10_000 });
    } finally {
      await publisher.close();
      await subscriber.close();
    }
  });
});
