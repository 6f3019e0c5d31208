import { JetStreamApiError } from "@nats-io/jetstream";
import { RequestError, TimeoutError } from "@nats-io/nats-core";
import { describe, expect, it } from "vitest";
import { formingReason, untilPlaced } from "../../../../src/adapters/nats/until-placed.js";
import { captureLogs } from "../../../harness/registry.js";

const apiError = (err_code: number, description: string, code = 400) => new JetStreamApiError({ err_code, code, description });
const noPeers = () => apiError(10005, "no suitable peers for placement");

/** An open that fails with each of `errors` in turn, then returns "opened". */
function failing(...errors: unknown[]) {
  const calls = { count: 0 };
  const open = async () => {
    const err = errors[calls.count++];
    if (err !== undefined) throw err;
    return "opened";
  };
  return { open, calls };
}

describe("formingReason", () => {
  it("names both causes of 'no suitable peers': a cluster still forming, or more replicas than servers", () => {
    const reason = formingReason(noPeers(), 3);
    expect(reason).toContain("no suitable peers for placement");
    expect(reason).toContain("still be forming");
    expect(reason).toContain("REGISTRY_REPLICAS=3");
  });

  it("waits out an election and an API that does not answer yet", () => {
    expect(formingReason(apiError(10008, "JetStream system temporarily unavailable", 503), 3)).toContain("electing");
    expect(formingReason(apiError(10202, "cluster member change is in progress"), 3)).toContain("electing");
    expect(formingReason(new TimeoutError(), 3)).toContain("no JetStream leader");
    expect(formingReason(new RequestError("request failed", { cause: new TimeoutError() }), 3)).toContain("no JetStream leader");
  });

  it("does not wait out what no wait mends", () => {
    expect(formingReason(apiError(10052, "replicas > 1 not supported in non-clustered mode"), 3)).toBeNull();
    expect(formingReason(new Error("Permissions Violation for Publish to \"$JS.API.STREAM.CREATE.x\""), 3)).toBeNull();
    expect(formingReason(new RequestError("no responders"), 3)).toBeNull();
  });
});

describe("untilPlaced", () => {
  it("opens again after each wait a forming cluster asks for, warning each time and telling /readyz why", async () => {
    const { logger, lines } = captureLogs();
    const { open, calls } = failing(noPeers(), new TimeoutError());
    const waits: string[] = [];
    const got = await untilPlaced("the KV bucket b", open, {
      signal: new AbortController().signal,
      log: logger,
      replicas: 3,
      waitsMs: [1, 2],
      onWait: (reason) => waits.push(reason),
    });
    expect(got).toBe("opened");
    expect(calls.count).toBe(3);
    const retries = lines.filter((l) => l.msg.startsWith("cannot open the KV bucket b yet"));
    expect(retries.map((l) => [l.level, l["attempt"], l["retry_in_ms"]])).toEqual([
      [40, 1, 1],
      [40, 2, 2],
    ]);
    expect(retries[0]!["reason"]).toContain("REGISTRY_REPLICAS=3");
    expect(waits).toHaveLength(2);
    expect(lines.some((l) => l.msg === "opened the KV bucket b after waiting for the JetStream cluster" && l["attempts"] === 3)).toBe(true);
  });

  it("fails at once, with the server's own error, on anything a wait cannot mend", async () => {
    const refused = apiError(10052, "replicas > 1 not supported in non-clustered mode");
    const { open, calls } = failing(refused);
    await expect(untilPlaced("the events stream e", open, { signal: new AbortController().signal, log: captureLogs().logger, replicas: 3, waitsMs: [1] })).rejects.toBe(refused);
    expect(calls.count).toBe(1);
  });

  it("stops waiting when the start is aborted", async () => {
    const abort = new AbortController();
    const { open } = failing(...Array.from({ length: 100 }, noPeers));
    const pending = untilPlaced("the KV bucket b", open, { signal: abort.signal, log: captureLogs().logger, replicas: 3, waitsMs: [60_000] });
    await new Promise((r) => setTimeout(r, 50));
    abort.abort("SIGTERM");
    await expect(pending).rejects.toBe("SIGTERM");
  });
});
