import { describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import { checkServer, MIN_CLUSTER_VERSION } from "../../../../src/adapters/nats/nats-connection.js";

const conn = (version: string, cluster?: string) => ({ info: { version, cluster } }) as unknown as NatsConnection;

describe("checkServer", () => {
  it("warns about clustered JetStream below 2.10.23", () => {
    const r = checkServer(conn("2.10.22", "c1"));
    expect(r).toMatchObject({ version: "2.10.22", clustered: true });
    expect(r.warnings.join(" ")).toContain(MIN_CLUSTER_VERSION);
    expect(r.warnings.join(" ")).toContain("nats-server#6888");
  });

  it("only advises an upgrade for a single old node, and is quiet on 2.11+", () => {
    const single = checkServer(conn("2.9.10"));
    expect(single.clustered).toBe(false);
    expect(single.warnings).toHaveLength(1);
    expect(single.warnings[0]).toMatch(/fine for a single node/);
    // What 2.9 lacks is named, with what the registry does instead.
    expect(single.warnings[0]).toMatch(/Before 2\.10\.0: event feeds filtered by several types read every event and filter in the registry/);
    expect(checkServer(conn("2.10.0")).warnings[0]).not.toMatch(/Before 2\.10/);
    expect(checkServer(conn("2.10.23", "c1")).warnings[0]).toMatch(/recommended/);
    expect(checkServer(conn("2.11.4", "c1")).warnings).toEqual([]);
    expect(checkServer(conn("2.12.1")).warnings).toEqual([]);
  });

  it("copes with a server that reports no version", () => {
    expect(checkServer({ info: undefined } as unknown as NatsConnection)).toEqual({ version: "unknown", clustered: false, warnings: [] });
  });
});
