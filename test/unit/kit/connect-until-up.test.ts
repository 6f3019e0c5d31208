import type { NatsConnection } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { connectUntilUp } from "../../../src/kit/connect-until-up.js";
import { captureLogs } from "../../harness/registry.js";
import { waitFor } from "../../harness/wait.js";

const refused = () => Promise.reject(new Error("connection refused"));

describe("connectUntilUp", () => {
  it("tries again after each failure, saying so at info level, until a server answers", async () => {
    const { logger, lines } = captureLogs();
    let attempts = 0;
    const nc = { close: async () => {} } as unknown as NatsConnection;
    const got = await connectUntilUp(
      { servers: ["nats://a:4222", "nats://b:4222"] },
      { signal: new AbortController().signal, log: logger, connect: () => (++attempts < 3 ? refused() : Promise.resolve(nc)) },
    );
    expect(got).toBe(nc);
    const retries = lines.filter((l) => l.msg.startsWith("cannot connect to NATS yet"));
    expect(retries.map((l) => [l.level, l["attempt"], l["servers"], l["reason"]])).toEqual([
      [30, 1, "nats://a:4222,nats://b:4222", "connection refused"],
      [30, 2, "nats://a:4222,nats://b:4222", "connection refused"],
    ]);
    expect(lines.some((l) => l.msg === "connected to NATS after retrying" && l["attempts"] === 3)).toBe(true);
  });

  it("names the servers without a password or token their URLs carry", async () => {
    const { logger, lines } = captureLogs();
    const abort = new AbortController();
    const pending = connectUntilUp(
      { servers: ["nats://registry:natspw@a:4222", "nats://s3cr3t-token@b:4222"] },
      { signal: abort.signal, log: logger, connect: refused },
    );
    await waitFor(() => lines.length > 0, { message: "the first retry's line" });
    abort.abort("enough");
    await expect(pending).rejects.toBe("enough");
    expect(lines.map((l) => l["servers"])).toEqual(["nats://registry:[redacted]@a:4222,nats://[redacted]@b:4222"]);
    expect(JSON.stringify(lines)).not.toMatch(/natspw|s3cr3t-token/);
  });

  it("gives up at once when aborted while it waits between attempts", async () => {
    const abort = new AbortController();
    const { logger } = captureLogs();
    const pending = connectUntilUp({ servers: "nats://x:1" }, { signal: abort.signal, log: logger, connect: refused });
    await new Promise((r) => setTimeout(r, 50));
    abort.abort("SIGTERM");
    await expect(pending).rejects.toBe("SIGTERM");
  });

  it("closes a connection that arrives after the abort", async () => {
    const abort = new AbortController();
    let closed = false;
    const nc = { close: async () => void (closed = true) } as unknown as NatsConnection;
    const pending = connectUntilUp({}, { signal: abort.signal, log: captureLogs().logger, connect: async () => (abort.abort("stop"), nc) });
    await expect(pending).rejects.toBe("stop");
    expect(closed).toBe(true);
  });
});
