/**
 * The packed batches a start's worker thread hands to the main thread (entry-batch.ts): every
 * entry comes back as it went in, in order, whatever its key, value and revision.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EntryBatchReader, EntryBatchWriter } from "../../../../src/adapters/nats/entry-batch.js";
import type { StoreEntry } from "../../../../src/domain/ports.js";

const entry = fc.record({
  key: fc.string({ minLength: 1, maxLength: 300, unit: "grapheme" }),
  revision: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  created: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  operation: fc.constantFrom("PUT" as const, "DEL" as const, "PURGE" as const),
  value: fc.uint8Array({ maxLength: 3000 }),
});

const readAll = (buffer: ArrayBuffer): StoreEntry[] => {
  const reader = new EntryBatchReader(buffer);
  const out: StoreEntry[] = [];
  for (let e = reader.next(); e !== null; e = reader.next()) out.push(e);
  return out;
};
const plain = (e: StoreEntry) => ({ key: e.key, revision: e.revision, created: e.created, operation: e.operation, value: [...e.value] });

describe("EntryBatchWriter and EntryBatchReader", () => {
  it("give back every entry as written, in order, across buffer growth and reuse", () => {
    // A small first buffer, so most batches grow it; two batches in a row, so a taken one is reused.
    const writer = new EntryBatchWriter(64);
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.array(entry, { maxLength: 5 }), (first, second) => {
        for (const batch of [first, second]) {
          for (const e of batch) writer.add(e.key, e.revision, e.created, e.operation, e.value);
          expect(writer.count).toBe(batch.length);
          const buffer = writer.take();
          expect(writer.count).toBe(0);
          expect(readAll(buffer).map(plain)).toEqual(batch.map(plain));
        }
      }),
    );
  });

  it("refuses a damaged batch rather than reading past its end", () => {
    const writer = new EntryBatchWriter();
    writer.add("agents.a", 1, 2, "PUT", new Uint8Array(100));
    const cut = writer.take().slice(0, 60);
    expect(() => new EntryBatchReader(cut).next()).toThrow(/damaged/);
  });
});
