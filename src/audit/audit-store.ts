/**
 * The mirror's writes. One dedicated connection holds the writer's session advisory lock and
 * carries every write, so writing is impossible without the lock: if that connection dies, the
 * lock and any open transaction die with it, and a standby may take over without overlap.
 * Each batch is one transaction: the rows, any gap found, and the new stream position, which
 * must still be the one this writer read (compare-and-set), so a batch commits entirely or not
 * at all and the position never disagrees with the rows.
 */
import pg from "pg";
import type { EventRow } from "./event-rows.js";
import { TenantBook } from "./event-rows.js";

export type Gap = { firstSeq: number; lastSeq: number };

/** The stored position is not the one this writer started from: another writer committed. */
export class PositionConflictError extends Error {
  constructor(stream: string, expected: number) {
    super(`the stored position of ${stream} moved away from ${expected}: another mirror is writing`);
    this.name = "PositionConflictError";
  }
}

const INSERT_ROWS = `
  INSERT INTO audit_events (seq, event_id, type, subject, agent_type, capability, tenant, time, event, nul_stripped)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::jsonb[], $10::boolean[])
  ON CONFLICT (event_id) DO NOTHING`;

const SET_POSITION = `
  INSERT INTO audit_position (stream, seq) VALUES ($1, $3)
  ON CONFLICT (stream) DO UPDATE SET seq = $3, updated_at = now() WHERE audit_position.seq = $2
  RETURNING seq`;

export class AuditWriter {
  #dead: Error | undefined;
  /** Transactions must not interleave on the one connection: each write waits for the previous. */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #onDeath = new Set<(err: Error) => void>();

  private constructor(private readonly client: pg.Client) {
    const die = (err: Error) => {
      if (this.#dead) return;
      this.#dead = err;
      for (const f of this.#onDeath) f(err);
    };
    // pg emits 'error' on an idle client whose connection broke; unhandled, it would crash the process.
    client.on("error", die);
    client.on("end", () => die(new Error("the writer's PostgreSQL connection ended")));
  }

  static async connect(url: string): Promise<AuditWriter> {
    const client = new pg.Client({ connectionString: url, application_name: "agent-registry-audit-writer", keepAlive: true, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
    } catch (err) {
      // A late 'error' from the half-open client must not reach the process as unhandled.
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
      throw err;
    }
    return new AuditWriter(client);
  }

  get dead(): Error | undefined {
    return this.#dead;
  }

  /** Called once when the connection breaks; the lock is gone from then on. */
  onDeath(f: (err: Error) => void): () => void {
    this.#onDeath.add(f);
    return () => this.#onDeath.delete(f);
  }

  /** The session advisory lock that makes this mirror the only writer of `stream`; false when another holds it. */
  async tryLock(stream: string): Promise<boolean> {
    const { rows } = await this.client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [`agent-registry:audit:writer:${stream}`]);
    return rows[0]?.ok === true;
  }

  get connection(): pg.ClientBase {
    return this.client;
  }

  async position(stream: string): Promise<number> {
    const { rows } = await this.client.query<{ seq: string }>("SELECT seq FROM audit_position WHERE stream = $1", [stream]);
    return rows[0] ? Number(rows[0].seq) : 0;
  }

  /** The tenant of every agent type and capability, from the newest row of each. */
  async tenantBook(): Promise<TenantBook> {
    const book = new TenantBook();
    const agents = await this.client.query<{ agent_type: string; scope: string | null }>(
      `SELECT DISTINCT ON (agent_type) agent_type, event->'data'->>'tenant_scope' AS scope
       FROM audit_events WHERE type = 'registry.agent.registered' AND agent_type IS NOT NULL ORDER BY agent_type, seq DESC`,
    );
    for (const r of agents.rows) book.agents.set(r.agent_type, r.scope);
    const caps = await this.client.query<{ capability: string; tenant: string | null }>(
      "SELECT DISTINCT ON (capability) capability, tenant FROM audit_events WHERE capability IS NOT NULL ORDER BY capability, seq DESC",
    );
    for (const r of caps.rows) book.capabilities.set(r.capability, r.tenant);
    return book;
  }

  /**
   * Writes `rows` (stream order), records `gaps`, and moves the position from `from` to `to`, in
   * one transaction. Returns how many rows were inserted: an event id already stored (the same
   * event published twice, outside the stream's duplicate window) is not stored again.
   */
  commit(stream: string, from: number, to: number, rows: readonly EventRow[], gaps: readonly Gap[]): Promise<number> {
    return this.#exclusive(() => this.#commit(stream, from, to, rows, gaps));
  }

  #exclusive<T>(f: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(f, f);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #commit(stream: string, from: number, to: number, rows: readonly EventRow[], gaps: readonly Gap[]): Promise<number> {
    if (this.#dead) throw this.#dead;
    const c = this.client;
    await c.query("BEGIN");
    try {
      const moved = await c.query(SET_POSITION, [stream, from, to]);
      if (moved.rowCount !== 1) throw new PositionConflictError(stream, from);
      let inserted = 0;
      if (rows.length > 0) {
        const result = await c.query(INSERT_ROWS, [
          rows.map((r) => r.seq),
          rows.map((r) => r.eventId),
          rows.map((r) => r.type),
          rows.map((r) => r.subject),
          rows.map((r) => r.agentType),
          rows.map((r) => r.capability),
          rows.map((r) => r.tenant),
          rows.map((r) => (r.time ? r.time.toISOString() : null)),
          rows.map((r) => r.eventJson),
          rows.map((r) => r.nulStripped),
        ]);
        inserted = result.rowCount ?? 0;
      }
      for (const g of gaps) {
        await c.query("INSERT INTO audit_gaps (stream, first_seq, last_seq) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [stream, g.firstSeq, g.lastSeq]);
      }
      await c.query("COMMIT");
      return inserted;
    } catch (err) {
      await c.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  }

  /** Deletes events older than `days` days; returns how many. */
  prune(days: number): Promise<number> {
    return this.#exclusive(async () => {
      const { rowCount } = await this.client.query("DELETE FROM audit_events WHERE time < now() - make_interval(days => $1)", [days]);
      return rowCount ?? 0;
    });
  }

  async close(): Promise<void> {
    this.#onDeath.clear();
    await this.client.end().catch(() => undefined);
  }
}
