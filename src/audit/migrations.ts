/**
 * The audit database's schema as numbered migrations, applied in one transaction under a
 * transaction-level advisory lock, so two mirrors starting at once do not both apply one, and a
 * failed migration leaves the schema as it was. A migration is never edited once released: a
 * change is a new entry. `schema_migrations` records what was applied.
 */
import type { ClientBase } from "pg";

export type Migration = { version: number; name: string; sql: string };

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "events, stream position, gaps",
    sql: `
      -- One row per stored event, keyed by its stream sequence; the CloudEvent as JSONB.
      -- event_id may be null only for a message that was not a CloudEvent.
      CREATE TABLE audit_events (
        seq         bigint PRIMARY KEY,
        event_id    text UNIQUE,
        type        text,
        subject     text,
        agent_type  text,
        capability  text,
        tenant      text,
        time        timestamptz,
        event       jsonb NOT NULL,
        -- the event carried U+0000, which JSONB cannot hold; it was removed (event-rows.ts)
        nul_stripped boolean NOT NULL DEFAULT false,
        mirrored_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX audit_events_agent_type ON audit_events (agent_type, seq) WHERE agent_type IS NOT NULL;
      CREATE INDEX audit_events_capability ON audit_events (capability, seq) WHERE capability IS NOT NULL;
      CREATE INDEX audit_events_time ON audit_events (time);
      -- The highest stream sequence whose rows are committed, written in the same transaction.
      CREATE TABLE audit_position (
        stream     text PRIMARY KEY,
        seq        bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Ranges of sequences that left the stream before they were mirrored.
      CREATE TABLE audit_gaps (
        stream      text NOT NULL,
        first_seq   bigint NOT NULL,
        last_seq    bigint NOT NULL,
        detected_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream, first_seq)
      );
    `,
  },
];

const LOCK_KEY = "agent-registry:audit:migrate";

/** Applies the migrations this database lacks; returns the versions applied now. */
export async function migrate(client: ClientBase, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number }>("SELECT version FROM schema_migrations");
    const have = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...have);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    // A newer mirror migrated this database: an older one must not write into a shape it does not know.
    if (newest > known) throw new Error(`the audit database is at schema version ${newest}, newer than this mirror knows (${known}); upgrade the mirror`);
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (have.has(m.version)) continue;
      await client.query(m.sql);
      await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
  return applied;
}
