/**
 * The `check` op's payload validation off the event loop (adversarial review: one check of a
 * 240 KB value against `(?:\p{L}|\p{N}){1000}` held the loop for 4.3 s): what stays on the
 * caller's thread (a schema that accepts anything, the schema's text, a copy of the request's
 * bytes), and the worker pool's verdicts and refusals, with workers started from TypeScript
 * source as vitest runs them.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Ajv } from "ajv";
import { PayloadCheckPool } from "../../../../src/adapters/workers/payload-check-pool.js";
import { moduleWorker } from "../../../../src/adapters/workers/module-worker.js";
import { PooledPayloadChecks, type PayloadCheckJob } from "../../../../src/service/queries/payload-checks.js";
import { PayloadChecker } from "../../../../src/domain/spec/payload-check.js";
import { RegistryError } from "../../../../src/domain/errors.js";

const pools: PayloadCheckPool[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function checkPool(opts: Partial<ConstructorParameters<typeof PayloadCheckPool>[0]> = {}) {
  const p = new PayloadCheckPool({ workers: 1, queue: 16, timeoutMs: 30_000, compileTimeoutMs: 30_000, ...opts });
  pools.push(p);
  return p;
}

const INVOICE = { type: "object", properties: { id: { type: "string", pattern: "^INV-[0-9]+$" } }, required: ["id"], additionalProperties: false };
const COSTLY = { type: "object", properties: { text: { type: "string", pattern: "(?:\\p{L}|\\p{N}){1000}" } } };
const HOSTILE = { text: ("a".repeat(999) + "!").repeat(240) };
const bytes = (body: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(body));

describe("PooledPayloadChecks", () => {
  function recording() {
    const jobs: PayloadCheckJob[] = [];
    return { jobs, checks: new PooledPayloadChecks({ check: async (job) => (jobs.push(job), []) }) };
  }

  it("answers a schema that accepts anything without a worker or a look at the payload", async () => {
    const { jobs, checks } = recording();
    for (const schema of [true, {}]) await expect(checks.check(schema, { value: HOSTILE, request: bytes({ payload: HOSTILE }) }, "input")).resolves.toEqual([]);
    expect(jobs).toEqual([]);
  });

  it("sends the schema's text, serialized once per schema object, and a copy of only the request's own bytes", async () => {
    const { jobs, checks } = recording();
    // The request as a view into a larger buffer, as a connection's read buffer may hold it.
    const whole = bytes({ payload: { id: "INV-1" } });
    const buffer = new Uint8Array(whole.length + 1000);
    buffer.set(whole, 500);
    const request = buffer.subarray(500, 500 + whole.length);
    const stringify = vi.spyOn(JSON, "stringify");
    await checks.check(INVOICE, { value: { id: "INV-1" }, request }, "input");
    await checks.check(INVOICE, { value: { id: "INV-1" }, request }, "output");
    expect(stringify.mock.calls.map((c) => c[0])).toEqual([INVOICE]);
    expect(jobs.map((j) => j.schema)).toEqual([JSON.stringify(INVOICE), JSON.stringify(INVOICE)]);
    expect(jobs.map((j) => j.direction)).toEqual(["input", "output"]);
    const sent = jobs[0]!.request as Uint8Array;
    expect(sent).not.toBe(request);
    expect(sent.buffer.byteLength).toBe(whole.length);
    expect(new TextDecoder().decode(sent)).toBe(new TextDecoder().decode(whole));
  });

  it("sends the payload as JSON text when the request came without its bytes", async () => {
    const { jobs, checks } = recording();
    await checks.check(INVOICE, { value: [1, "two"] }, "input");
    expect(jobs[0]!.request).toBe('{"payload":[1,"two"]}');
  });
});

describe("PayloadCheckPool (worker threads from source)", () => {
  const checks = (opts: Partial<ConstructorParameters<typeof PayloadCheckPool>[0]> = {}) => new PooledPayloadChecks(checkPool(opts));

  it("answers the verdicts PayloadChecker answers, validating in the worker, never on this thread", async () => {
    const compile = vi.spyOn(Ajv.prototype, "compile");
    const c = checks();
    const reference = new PayloadChecker();
    const cases: Array<[unknown, unknown]> = [
      [INVOICE, { id: "INV-7" }],
      [INVOICE, { id: "7", extra: true }],
      [INVOICE, { parts: [{ kind: "text", text: "x" }, { kind: "data", data: { id: "nope" } }] }],
      [INVOICE, { parts: [{ kind: "text", text: "only text" }] }],
      [false, { id: "INV-1" }],
      [COSTLY, { text: "é".repeat(1000) }],
    ];
    for (const [schema, payload] of cases) {
      const expected = reference.check(schema, payload, "input");
      compile.mockClear();
      await expect(c.check(schema, { value: payload, request: bytes({ capability: "x.y", payload }) }, "input")).resolves.toEqual(expected);
      await expect(c.check(schema, { value: payload }, "input")).resolves.toEqual(expected);
      expect(compile).not.toHaveBeenCalled();
    }
  });

  it("stops a check that runs past its budget with 429 limit_exceeded, replaces the worker and goes on", async () => {
    const lost: string[] = [];
    const c = checks({ timeoutMs: 300, onWorkerLost: (reason) => lost.push(reason) });
    await expect(c.check(COSTLY, { value: { text: "x" } }, "input")).resolves.toHaveLength(1); // the worker is loaded
    const started = performance.now();
    const err = await c.check(COSTLY, { value: HOSTILE, request: bytes({ payload: HOSTILE }) }, "input").catch((e: unknown) => e);
    const took = performance.now() - started;
    expect(err).toBeInstanceOf(RegistryError);
    expect(err).toMatchObject({ code: "limit_exceeded", status: 429, message: expect.stringMatching(/^checking this payload took longer than 300 ms and was stopped: .*\(limit 300 ms, REGISTRY_PAYLOAD_CHECK_TIMEOUT_MS\)$/) });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(lost).toEqual(["timeout"]);
    await expect(c.check(INVOICE, { value: { id: "INV-1" } }, "input")).resolves.toEqual([]);
  });

  it("refuses with 503 unavailable past the queue bound, and a check that waited a budget for a worker", async () => {
    const c = checks({ timeoutMs: 400, queue: 1 });
    await expect(c.check(INVOICE, { value: {} }, "input")).resolves.toHaveLength(1);
    const running = c.check(COSTLY, { value: HOSTILE }, "input").catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve)); // the worker takes it; the queue is empty again
    const waiting = c.check(INVOICE, { value: {} }, "input").catch((e: unknown) => e);
    const refused = await c.check(INVOICE, { value: {} }, "input").catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "unavailable", status: 503, message: "payload checks are busy: 1 wait for a worker, the limit is 1 (REGISTRY_PAYLOAD_CHECK_QUEUE); retry in a moment" });
    expect(await waiting).toMatchObject({ code: "unavailable", message: "payload checks are busy: this one waited 400 ms for a worker; retry in a moment" });
    expect(await running).toMatchObject({ code: "limit_exceeded" });
  });

  it("compiles a schema in a step of its own, bounded apart, only the first time a worker sees it", async () => {
    // The worker itself, driven on the pool's wire: what it posts for each job.
    const worker = moduleWorker(new URL("../../../../src/adapters/workers/payload-check-pool.ts", import.meta.url).href, "payload-worker");
    try {
      const messages: unknown[] = [];
      /** Resolves once `n` messages came in all. */
      const next = (n: number) =>
        new Promise<void>((resolve) => {
          const onMessage = (m: unknown) => {
            messages.push(m);
            if (messages.length < n) return;
            worker.off("message", onMessage);
            resolve();
          };
          worker.on("message", onMessage);
        });
      await next(1);
      expect(messages).toEqual([{ ready: true }]);
      const job = (id: number, payload: unknown) => worker.postMessage({ id, input: { schema: JSON.stringify(INVOICE), request: bytes({ payload }), direction: "input" } });
      job(1, { id: "INV-1" });
      await next(4);
      job(2, { id: "x" });
      await next(5);
      expect(messages.slice(1)).toEqual([
        { id: 1, phase: "compile" },
        { id: 1, phase: null },
        { id: 1, output: [] },
        { id: 2, output: [{ path: "payload.id", message: 'must match pattern "^INV-[0-9]+$"' }] },
      ]);
    } finally {
      await worker.terminate();
    }
  });

  it("refuses with 503 once closed", async () => {
    const pool = checkPool();
    await pool.close();
    await expect(pool.check({ schema: "{}", request: "{}", direction: "input" })).rejects.toMatchObject({ code: "unavailable", message: "the registry is stopping" });
  });
});
