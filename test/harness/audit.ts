/**
 * An audit mirror in-process (runAudit) for integration tests: logs captured as parsed lines,
 * the ops server on a free port, stopped by resolving its `until`.
 */
import type { ConnectionOptions } from "@nats-io/nats-core";
import { loadAuditConfig } from "../../src/config/audit.js";
import { runAudit } from "../../src/audit/run.js";
import { sql } from "./postgres.js";
import { captureLogs, type LogLine } from "./registry.js";
import { waitFor } from "./wait.js";

export type TestAudit = {
  logs: LogLine[];
  port: number;
  /** Resolves when runAudit returned; rejects if it threw. */
  done: Promise<void>;
  get(path: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
};

/** `nats` adds connection options (credentials, an inbox prefix) to the server URL. */
export async function startAudit(opts: { natsUrl: string; databaseUrl: string; prefix: string; stream: string; env?: Record<string, string>; nats?: ConnectionOptions }): Promise<TestAudit> {
  const { logger, lines } = captureLogs("debug");
  const config = loadAuditConfig({}, { DATABASE_URL: opts.databaseUrl, REGISTRY_EVENTS_STREAM: opts.stream, AUDIT_HTTP_PORT: "0", AUDIT_HTTP_HOST: "127.0.0.1", AUDIT_STANDBY_RETRY_MS: "100", AUDIT_MAX_RETRY_MS: "1000", ...opts.env });
  let stop!: () => void;
  const until = new Promise<void>((r) => (stop = r));
  let port = 0;
  const done = runAudit({ config, nats: { servers: opts.natsUrl.split(","), ...opts.nats }, prefix: opts.prefix, version: "0.0.0-test", log: logger, until, onListening: (p) => (port = p) });
  done.catch(() => undefined);
  await waitFor(() => port !== 0, { message: "audit ops server listens" });
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, text: await res.text() };
  };
  return {
    logs: lines,
    port,
    done,
    get,
    stop: async () => {
      stop();
      await done;
    },
  };
}

/** Seq and event id of every mirrored row, in seq order. */
export async function mirroredRows(url: string): Promise<Array<{ seq: number; event_id: string | null; type: string | null; tenant: string | null; nul_stripped: boolean; event: any }>> {
  const rows = await sql(url, "SELECT seq, event_id, type, tenant, nul_stripped, event FROM audit_events ORDER BY seq");
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}
