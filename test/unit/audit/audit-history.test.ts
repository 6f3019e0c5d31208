/**
 * The history op's body rules, cursors and page cutting (src/audit/history.ts), without a
 * database: the integration test runs the query itself.
 */
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, history, page } from "../../../src/audit/history.js";
import { RegistryError } from "../../../src/domain/errors.js";

const row = (seq: number, dataBytes = 10) => ({ seq: String(seq), event: JSON.stringify({ id: `e${seq}`, type: "registry.agent.registered", data: { pad: "x".repeat(dataBytes) } }) });

describe("page", () => {
  it("returns at most limit events, oldest first, with a cursor when more are left", () => {
    const p = page([row(1), row(2), row(3)], 2, 1_000_000, 3, 5);
    expect(p.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(decodeCursor(p.next_cursor!)).toBe(2);
    expect(p).toMatchObject({ mirrored_seq: 3, stream_last_seq: 5 });
    expect(page([row(1)], 2, 1_000_000, 1, 1).next_cursor).toBeNull();
  });

  it("ends a page early to fit the byte budget, and resumes after the last event sent", () => {
    const rows = [row(1, 400), row(2, 400), row(3, 400)];
    const p = page(rows, 10, 1000, 3, 3);
    expect(p.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(decodeCursor(p.next_cursor!)).toBe(2);
    expect(Buffer.byteLength(JSON.stringify(p.events))).toBeLessThanOrEqual(1000);
  });

  it("sends an event too big for any reply without its data, so paging moves on", () => {
    const p = page([row(1, 5000), row(2), row(3, 5000)], 10, 1000, 3, 3);
    expect(p.events.map((e) => e.seq)).toEqual([1, 2]);
    expect(p.events[0]).toMatchObject({ seq: 1, id: "e1", data: null, data_omitted: true });
    expect(p.events[1]).toMatchObject({ seq: 2, data: { pad: "x".repeat(10) } });
    // the next big one starts the next page, where it goes without its data in turn
    expect(decodeCursor(p.next_cursor!)).toBe(2);
  });
});

describe("history bodies", () => {
  const source = { pool: undefined as never, stream: "S", streamLastSeq: async () => 0, maxPayload: () => 1 << 20 };
  const refused = async (body: unknown) => {
    const e = await history(source, body, null).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(RegistryError);
    return (e as RegistryError).code;
  };

  it("refuses bad fields before touching the database", async () => {
    expect(await refused({ limit: 0 })).toBe("invalid_request");
    expect(await refused({ limit: 1001 })).toBe("invalid_request");
    expect(await refused({ agent_type: "Bad Type" })).toBe("invalid_request");
    expect(await refused({ since: "not a time" })).toBe("invalid_request");
    // Times JavaScript reads but PostgreSQL cannot take (they reached the database as a 500).
    expect(await refused({ since: "+275760-09-13T00:00:00.000Z" })).toBe("invalid_request");
    expect(await refused({ until: "+010000-01-01T00:00:00Z" })).toBe("invalid_request");
    expect(await refused({ since: "-000001-01-01T00:00:00Z" })).toBe("invalid_request");
    expect(await refused({ since: "2026-02-01T00:00:00Z", until: "2026-01-01T00:00:00Z" })).toBe("invalid_request");
    expect(await refused({ types: [] })).toBe("invalid_request");
    expect(await refused({ unknown: 1 })).toBe("invalid_request");
    expect(await refused({ cursor: "bm9wZQ" })).toBe("invalid_request");
  });

  it("round-trips cursors", () => {
    expect(decodeCursor(encodeCursor(123456789))).toBe(123456789);
  });
});
