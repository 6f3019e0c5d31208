/**
 * The supercluster harness itself: regions joined by gateways share messages and JetStream
 * (a stream placed in one region's cluster is written from another), a cut-off region keeps
 * its own messages and streams, and after the heal messages cross again. The regions tests
 * build on these facts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { startSupercluster, type SuperclusterHandle } from "../harness/supercluster.js";
import { canControlNatsServers } from "../harness/nats.js";
import { natsServerVersion, natsServerBinaryName } from "../../src/adapters/nats/nats-server-process.js";
import { retryUntil, waitFor } from "../harness/wait.js";

describe.runIf(canControlNatsServers())("supercluster harness", () => {
  let sc: SuperclusterHandle;
  const conns: NatsConnection[] = [];
  const client = async (region: string) => {
    const nc = await connect({ servers: sc.regions[region]!.url.split(","), maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    conns.push(nc);
    return nc;
  };

  beforeAll(async () => {
    sc = await startSupercluster({ regions: ["eu", "us"] });
  });
  afterAll(async () => {
    await Promise.all(conns.map((nc) => nc.close().catch(() => undefined)));
    await sc?.stop();
  });

  it("starts one cluster per region, named after it, on the requested server", async () => {
    expect(sc.names).toEqual(["eu", "us"]);
    const eu = await client("eu");
    expect(eu.info?.cluster).toBe("eu");
    expect(eu.info?.version).toBe(await natsServerVersion(natsServerBinaryName()));
    const us = await client("us");
    expect(us.info?.cluster).toBe("us");
  });

  it("places a stream in the cluster asked for, and any region writes and reads it", async () => {
    const eu = await client("eu");
    const us = await client("us");
    const jsm = await jetstreamManager(eu);
    const info = await jsm.streams.add({ name: "PLACED_US", subjects: ["placed.us.>"], placement: { cluster: "us", tags: [] } });
    expect(info.cluster?.name).toBe("us");
    // The stream's interest reaches eu's gateway a moment after the stream exists.
    await retryUntil(() => jetstream(eu).publish("placed.us.one", "from eu", { msgID: "one" }), { timeoutMs: 20_000, message: "eu to reach the stream in us" });
    const got = await (await jetstreamManager(us)).streams.getMessage("PLACED_US", { last_by_subj: "placed.us.one" });
    expect(got?.string()).toBe("from eu");
  });

  it("a cut-off region keeps its messages and streams to itself, and they cross again after the heal", async () => {
    const eu = await client("eu");
    const us = await client("us");
    await (await jetstreamManager(us)).streams.add({ name: "LOCAL_US", subjects: ["local.us.>"], placement: { cluster: "us", tags: [] } });
    us.subscribe("echo.us", { callback: (_e, m) => void m.respond("us here") });
    await us.flush();
    // Interest crosses a gateway a moment after the subscription: ask until it has.
    const reply = await retryUntil(() => eu.request("echo.us", "", { timeout: 1_000 }), { timeoutMs: 20_000, message: "eu to reach the responder in us" });
    expect(reply.string()).toBe("us here");
    const heardInEu: string[] = [];
    eu.subscribe("cross.>", { callback: (_e, m) => void heardInEu.push(m.string()) });
    await eu.flush();

    sc.isolate("us");
    // Once the gateway is gone, eu no longer sees the responder in us.
    await waitFor(() => eu.request("echo.us", "", { timeout: 1_000 }).then(() => false, () => true), { timeoutMs: 20_000, message: "eu to lose sight of us" });
    // The servers were not restarted: both sides' clients stay connected, and us's own R1 stream takes writes.
    expect(us.isClosed() || eu.isClosed()).toBe(false);
    const ack = await jetstream(us).publish("local.us.during", "cut off");
    expect(ack.stream).toBe("LOCAL_US");

    await sc.heal("us");
    await waitFor(
      () => {
        us.publish("cross.after", "after");
        return heardInEu.includes("after");
      },
      { timeoutMs: 20_000, message: "a message from us to reach eu after the heal" },
    );
    const again = await retryUntil(() => eu.request("echo.us", "", { timeout: 1_000 }), { timeoutMs: 20_000, message: "eu to reach us again" });
    expect(again.string()).toBe("us here");
    const got = await (await jetstreamManager(eu)).streams.getMessage("LOCAL_US", { last_by_subj: "local.us.during" });
    expect(got?.string()).toBe("cut off");
  });
});
