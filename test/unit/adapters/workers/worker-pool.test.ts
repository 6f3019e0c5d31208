/**
 * The worker pool's bounds (issue 14, finding 9): a bounded queue, a timeout per job that
 * replaces the worker, a replacement after a crash, a clear failure when no worker can start,
 * idle workers stopped, and close() refusing what waits. Workers here are small plain
 * JavaScript programs speaking the pool's wire, so each behaviour is forced, not timed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Worker } from "node:worker_threads";
import { JobFailedError, JobWaitError, PoolBusyError, PoolClosedError, WorkerPool, type LostReason, type WorkerPoolOptions } from "../../../../src/adapters/workers/worker-pool.js";

/**
 * A worker answering `n * 2`, looping forever on "hang", exiting on "die"; `{ step, then }`
 * spins `step` ms in a "slow" phase, goes back to its own budget, spins `then` ms and answers
 * (or hangs with `then: -1`; with `step: -1` it hangs in the phase).
 */
const DOUBLER = `
const { parentPort } = require("node:worker_threads");
const spin = (ms) => { if (ms < 0) for (;;); for (const end = Date.now() + ms; Date.now() < end; ); };
parentPort.on("message", ({ id, input }) => {
  if (input === "hang") for (;;);
  if (typeof input === "object" && input !== null) {
    parentPort.postMessage({ id, phase: "slow" });
    spin(input.step);
    parentPort.postMessage({ id, phase: null });
    spin(input.then);
    return parentPort.postMessage({ id, output: "stepped" });
  }
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

  it("gives a job's named step its own budget and starts the job's own again after it, saying where a timeout was", async () => {
    const { p, lost } = pool({ timeoutMs: 250, phases: { slow: 600 } });
    // 550 ms in all, the step 400 of them: neither budget is exceeded.
    await expect(p.run({ step: 400, then: 150 })).resolves.toBe("stepped");
    const inStep = await p.run({ step: -1, then: 0 }).catch((e: unknown) => e);
    expect(inStep).toMatchObject({ reason: "timeout", phase: "slow", message: "the job's slow step ran longer than 600 ms; its worker was stopped" });
    const afterStep = await p.run({ step: 400, then: -1 }).catch((e: unknown) => e);
    expect(afterStep).toMatchObject({ reason: "timeout", phase: null, message: "the job ran longer than 250 ms; its worker was stopped" });
    expect(lost).toEqual(["timeout", "timeout"]);
  });

  it("with maxWaitMs, refuses a job that waited that long behind busy workers, without running it", async () => {
    const { p } = pool({ timeoutMs: 60_000, maxWaitMs: 150 });
    await expect(p.run(1)).resolves.toBe(2);
    const hung = p.run("hang").catch((e: unknown) => e);
    const started = performance.now();
    const err = await p.run(2).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(err).toBeInstanceOf(JobWaitError);
    expect(err).toMatchObject({ waitedMs: 150, message: "the job waited 150 ms for a worker, all of them busy" });
    expect(p.queued).toBe(0);
    await p.close();
    expect(await hung).toBeInstanceOf(PoolClosedError);
  });

  it("with maxWaitMs, does not count the time a worker takes to load against a waiting job", async () => {
    // The worker says it is ready only after 400 ms: the job waits for it and runs.
    const slow = `setTimeout(() => { ${DOUBLER} }, 400);`.replace('const { parentPort } = require("node:worker_threads");', "");
    const { p } = pool({ code: `const { parentPort } = require("node:worker_threads");\n${slow}`, maxWaitMs: 100 });
    await expect(p.run(4)).resolves.toBe(8);
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
