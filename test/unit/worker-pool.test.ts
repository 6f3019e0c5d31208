/**
 * The worker pool's bounds (issue 14, finding 9): a bounded queue, a timeout per job that
 * replaces the worker, a replacement after a crash, a clear failure when no worker can start,
 * idle workers stopped, and close() refusing what waits. Workers here are small plain
 * JavaScript programs speaking the pool's wire, so each behaviour is forced, not timed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Worker } from "node:worker_threads";
import { JobFailedError, PoolBusyError, PoolClosedError, WorkerPool, type LostReason, type WorkerPoolOptions } from "../../src/adapters/workers/worker-pool.js";

/** A worker answering `n * 2`, looping forever on "hang", exiting on "die". */
const DOUBLER = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ id, input }) => {
  if (input === "hang") for (;;);
  if (input === "die") process.exit(3);
  if (input === "throw") return parentPort.postMessage({ id, error: "no such input" });
  parentPort.postMessage({ id, output: input * 2 });
});
parentPort.postMessage({ ready: true });
`;

const pools: Array<WorkerPool<unknown, unknown>> = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(opts: Partial<WorkerPoolOptions> & { code?: string } = {}) {
  const spawned: Worker[] = [];
  const lost: LostReason[] = [];
  const p = new WorkerPool<unknown, number>({
    size: 1,
    maxQueue: 10,
    timeoutMs: 60_000,
    idleMs: 60_000,
    spawn: () => {
      const w = new Worker(opts.code ?? DOUBLER, { eval: true });
      spawned.push(w);
      return w;
    },
    onWorkerLost: (reason) => lost.push(reason),
    ...opts,
  });
  pools.push(p as WorkerPool<unknown, unknown>);
  return { p, spawned, lost };
}

const exited = (w: Worker) => new Promise<void>((resolve) => (w.threadId === -1 ? resolve() : w.once("exit", () => resolve())));

describe("WorkerPool", () => {
  it("runs jobs on up to `size` workers and answers each its own output", async () => {
    const { p, spawned } = pool({ size: 2 });
    await expect(Promise.all([1, 2, 3, 4, 5].map((n) => p.run(n)))).resolves.toEqual([2, 4, 6, 8, 10]);
    expect(spawned.length).toBeLessThanOrEqual(2);
    await expect(p.run("throw")).rejects.toThrow("no such input");
  });

  it("refuses past the queue bound at once, with the numbers", async () => {
    const { p } = pool({ maxQueue: 2 });
    // No worker is ready yet, so all three wait: the third is one too many.
    const first = [p.run(1), p.run(2)];
    await expect(p.run(3)).rejects.toBeInstanceOf(PoolBusyError);
    await expect(p.run(3)).rejects.toThrow("2 jobs are waiting for a worker; the limit is 2");
    await expect(Promise.all(first)).resolves.toEqual([2, 4]);
    await expect(p.run(3)).resolves.toBe(6);
  });

  it("stops a job that runs past its time, replaces the worker and goes on", async () => {
    const { p, spawned, lost } = pool({ timeoutMs: 200 });
    await expect(p.run(1)).resolves.toBe(2);
    const hung = p.run("hang");
    const next = p.run(21); // waits behind the hung job
    const err = await hung.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err).toMatchObject({ reason: "timeout", message: "the job ran longer than 200 ms; its worker was stopped" });
    await expect(next).resolves.toBe(42);
    expect(lost).toEqual(["timeout"]);
    expect(spawned).toHaveLength(2);
    await exited(spawned[0]!);
  });

  it("fails the job of a worker that dies, and replaces the worker", async () => {
    const { p, spawned, lost } = pool();
    await expect(p.run("die")).rejects.toMatchObject({ reason: "crash", message: "the worker exited with code 3" });
    await expect(p.run(5)).resolves.toBe(10);
    expect(lost).toEqual(["crash"]);
    expect(spawned).toHaveLength(2);
  });

  it("fails what waits when no worker can start, and tries again on the next job", async () => {
    const { p, spawned, lost } = pool({ code: `throw new Error("broken install")` });
    const waiting = [p.run(1), p.run(2)];
    for (const w of waiting) await expect(w).rejects.toMatchObject({ reason: "boot", message: expect.stringContaining("broken install") });
    expect(lost).toEqual(["boot"]);
    await expect(p.run(3)).rejects.toMatchObject({ reason: "boot" });
    expect(spawned).toHaveLength(2); // one try per wave of jobs, not a restart loop
  });

  it("stops idle workers and starts one again when a job comes", async () => {
    const { p, spawned } = pool({ idleMs: 50 });
    await expect(p.run(1)).resolves.toBe(2);
    await exited(spawned[0]!);
    await expect(p.run(2)).resolves.toBe(4);
    expect(spawned).toHaveLength(2);
  });

  it("close() refuses waiting and running jobs, terminates the workers, and refuses new jobs", async () => {
    const { p, spawned } = pool({ timeoutMs: 60_000 });
    await expect(p.run(1)).resolves.toBe(2);
    const outcomes = Promise.allSettled([p.run("hang"), p.run(2)]); // running, waiting
    await p.close();
    for (const o of await outcomes) expect(o).toMatchObject({ status: "rejected", reason: expect.any(PoolClosedError) });
    await expect(p.run(3)).rejects.toBeInstanceOf(PoolClosedError);
    expect(p.freeSlots).toBe(0);
    await Promise.all(spawned.map(exited));
  });
});
