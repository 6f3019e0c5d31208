/**
 * The service's schema checks (issue 14, finding 9): compilation happens in a worker thread
 * (here started from TypeScript source, as vitest and tsx run it), while the cheap part, the
 * verdict cache and the sharing of compilations in flight stay on the caller's thread.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Ajv } from "ajv";
import { SchemaPool } from "../../../../src/adapters/workers/schema-pool.js";
import { PooledSchemaChecks, type CompiledSchema, type SchemaCompilePool } from "../../../../src/service/registration/schema-checks.js";
import { MAX_SCHEMA_NODES } from "../../../../src/domain/spec/schema-check.js";
import { RegistryError } from "../../../../src/domain/errors.js";

const pools: SchemaPool[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function schemaPool(opts: Partial<ConstructorParameters<typeof SchemaPool>[0]> = {}) {
  const p = new SchemaPool({ workers: 1, queue: 1024, timeoutMs: 30_000, ...opts });
  pools.push(p);
  return p;
}

/** A pool double that records what it was asked to compile and answers when told. */
function manualPool() {
  const asked: string[] = [];
  const answers: Array<(r: CompiledSchema) => void> = [];
  const pool: SchemaCompilePool = {
    compile: (texts) =>
      texts.map((t) => {
        asked.push(t);
        return new Promise<CompiledSchema>((resolve) => answers.push(resolve));
      }),
  };
  return { pool, asked, answerAll: (r: CompiledSchema) => answers.splice(0).forEach((a) => a(r)) };
}

const heavy = (seed: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES - 2 }, (_, i) => [`p${seed}_${i}`, { type: "string", minLength: 1 }])) });

describe("PooledSchemaChecks over a SchemaPool (worker threads from source)", () => {
  it("compiles in a worker thread, never on the caller's: ajv's compile is not called here", async () => {
    const compile = vi.spyOn(Ajv.prototype, "compile");
    const checks = new PooledSchemaChecks(schemaPool());
    const { verdicts, ms } = await checks.checkAll([heavy(1), heavy(2), { type: "string", pattern: "(?<=x)y" }, { $ref: "https://evil.example/x" }, {}, true]);
    expect(verdicts.slice(0, 2)).toEqual([null, null]);
    expect(verdicts[2]).toMatchObject({ path: "pattern", message: expect.stringMatching(/cannot be matched in linear time/) });
    expect(verdicts[3]?.message).toMatch(/can't resolve reference/);
    expect(verdicts.slice(4)).toEqual([null, null]);
    expect(ms).toBeGreaterThan(0);
    expect(compile).not.toHaveBeenCalled();
  });

  it("refuses a schema whose compilation outlives the timeout, replaces the worker, and does not remember the verdict", async () => {
    const lost: string[] = [];
    const pool = schemaPool({ timeoutMs: 1, onWorkerLost: (reason) => lost.push(reason) });
    const checks = new PooledSchemaChecks(pool);
    // Compiling 254 properties takes well over a millisecond anywhere.
    const first = await checks.checkAll([heavy(3)]);
    expect(first.verdicts[0]).toMatchObject({ path: "", message: expect.stringMatching(/^schema took longer than 1 ms to compile; it was refused/) });
    expect(first.ms).toBe(1);
    expect(lost).toContain("timeout");
    const again = await checks.checkAll([heavy(3)]);
    expect(again.verdicts[0]).not.toBeNull(); // compiled again (and timed out again), not read from a cache
    expect(lost.filter((r) => r === "timeout")).toHaveLength(2);
  });

  it("warm() resolves once a worker has loaded, so the first spec does not wait for one", async () => {
    const lost: string[] = [];
    const pool = schemaPool({ onWorkerLost: (reason) => lost.push(reason) });
    await expect(pool.warm()).resolves.toBeUndefined();
    expect(pool.queued).toBe(0);
    expect(lost).toEqual([]);
  });

  it("answers 503 unavailable once the registry is stopping", async () => {
    const pool = schemaPool();
    const checks = new PooledSchemaChecks(pool);
    await pool.close();
    const err = await checks.checkAll([heavy(4)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect(err).toMatchObject({ code: "unavailable", status: 503, message: "the registry is stopping" });
  });
});

describe("PooledSchemaChecks", () => {
  it("sends only what it has not seen: booleans, {} and cached verdicts stay on the caller's thread", async () => {
    const { pool, asked, answerAll } = manualPool();
    const checks = new PooledSchemaChecks(pool);
    const a = { type: "string" };
    const first = checks.checkAll([a, a, {}, false, { type: "integer" }]);
    expect(asked).toEqual(['{"type":"string"}', '{"type":"integer"}']); // the same text once
    answerAll({ verdict: null, ms: 7 });
    await expect(first).resolves.toEqual({ verdicts: [null, null, null, null, null], ms: 14 });
    await expect(checks.checkAll([{ type: "string" }, { type: "integer" }])).resolves.toEqual({ verdicts: [null, null], ms: 0 });
    expect(asked).toHaveLength(2);
  });

  it("compiles a schema once for requests that need it at the same time", async () => {
    const { pool, asked, answerAll } = manualPool();
    const checks = new PooledSchemaChecks(pool);
    const problem = { path: "", message: "nope" };
    const requests = [checks.checkAll([{ type: "nope" }]), checks.checkAll([{ type: "nope" }]), checks.checkAll([{ type: "nope" }])];
    expect(asked).toHaveLength(1);
    answerAll({ verdict: problem, ms: 5 });
    const results = await Promise.all(requests);
    expect(results.map((r) => r.verdicts[0])).toEqual([problem, problem, problem]);
    expect(results.map((r) => r.ms)).toEqual([5, 0, 0]); // charged to the request that caused it
  });

  it("refuses a whole spec with 503 when the queue cannot take all of its schemas", async () => {
    const pool = schemaPool({ queue: 3 });
    const checks = new PooledSchemaChecks(pool);
    const err = await checks.checkAll([heavy(5), heavy(6), heavy(7), heavy(8)]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect(err).toMatchObject({ status: 503, message: expect.stringMatching(/spec validation is busy: 0 schemas wait to be compiled and this spec brings 4 more; the limit is 3/) });
    expect(pool.queued).toBe(0); // nothing of it was queued
  });

  it("gives nothing to the cache when a compilation is transient (timeout, crash)", async () => {
    const { pool, asked, answerAll } = manualPool();
    const checks = new PooledSchemaChecks(pool);
    const first = checks.checkAll([{ type: "string", minLength: 1 }]);
    answerAll({ verdict: { path: "", message: "timed out" }, ms: 5000, transient: true });
    await first;
    const second = checks.checkAll([{ type: "string", minLength: 1 }]);
    expect(asked).toHaveLength(2);
    answerAll({ verdict: null, ms: 3 });
    await expect(second).resolves.toEqual({ verdicts: [null], ms: 3 });
  });
  it("prepares a schema object met again once, paces the rest, and waits for the workers off the pacer (issue 35, item 6)", async () => {
    const { pool, asked, answerAll } = manualPool();
    const checks = new PooledSchemaChecks(pool);
    // One resolved object for every capability, as resolving a spec's refs to one stored schema gives.
    const shared = { type: "object", properties: { text: { type: "string", description: "x".repeat(1000) } } };
    const schemas = Array.from({ length: 512 }, () => shared);
    const events: string[] = [];
    const pacer = {
      next: () => void events.push("next"),
      off: async <T>(wait: () => Promise<T>) => {
        events.push("off");
        return wait();
      },
    };
    const serialized = vi.spyOn(JSON, "stringify");
    const result = checks.checkAll(schemas, pacer);
    expect(asked).toHaveLength(1);
    expect(serialized).toHaveBeenCalledTimes(1);
    answerAll({ verdict: null, ms: 9 });
    await expect(result).resolves.toEqual({ verdicts: schemas.map(() => null), ms: 9 });
    expect(events).toEqual([...schemas.map(() => "next"), "off"]);
  });

  it("stops before sending anything to the workers when the pacer throws (a spent budget)", async () => {
    const { pool, asked } = manualPool();
    const checks = new PooledSchemaChecks(pool);
    let left = 3;
    const pacer = {
      next: () => {
        if (--left < 0) throw new Error("budget spent");
        return undefined;
      },
      off: <T>(wait: () => Promise<T>) => wait(),
    };
    await expect(checks.checkAll([{ type: "string" }, { type: "integer" }, { type: "number" }, { type: "boolean" }], pacer)).rejects.toThrow("budget spent");
    expect(asked).toEqual([]);
  });
});
