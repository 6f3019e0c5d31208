/**
 * The queue between the mirror's stream reader and its database writer (src/audit/batch-queue.ts).
 */
import { describe, expect, it } from "vitest";
import { BatchQueue } from "../../../src/audit/batch-queue.js";

describe("BatchQueue", () => {
  it("hands the writer everything that arrived meanwhile, up to a batch", async () => {
    const q = new BatchQueue<number>(100);
    for (let i = 1; i <= 5; i++) await q.push(i);
    expect(await q.take(3)).toEqual([1, 2, 3]);
    expect(await q.take(3)).toEqual([4, 5]);
  });

  it("makes the writer wait for the first item, and ends with an empty batch", async () => {
    const q = new BatchQueue<number>(100);
    const taken = q.take(10);
    await q.push(7);
    expect(await taken).toEqual([7]);
    const last = q.take(10);
    q.end();
    expect(await last).toEqual([]);
  });

  it("holds a reader that is `limit` ahead until the writer takes", async () => {
    const q = new BatchQueue<number>(2);
    await q.push(1);
    let pushed = false;
    const second = q.push(2).then(() => (pushed = true));
    await Promise.resolve();
    expect(pushed).toBe(false);
    expect(await q.take(1)).toEqual([1]);
    await second;
    expect(pushed).toBe(true);
  });

  it("gives the writer the reader's error once the items before it are written", async () => {
    const q = new BatchQueue<number>(10);
    await q.push(1);
    q.end(new Error("consumer gone"));
    expect(await q.take(10)).toEqual([1]);
    await expect(q.take(10)).rejects.toThrow("consumer gone");
  });

  it("releases a waiting reader when ended", async () => {
    const q = new BatchQueue<number>(1);
    const blocked = q.push(1);
    q.end();
    await blocked;
  });
});
