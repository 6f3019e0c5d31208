/**
 * PostgreSQL for the audit tests and benchmarks. `createTestDatabase` makes a database of its
 * own on a server and drops it afterwards; tests get theirs on the run's shared server through
 * shared-postgres.ts. `startPostgres` runs a private instance (initdb into a temp directory, a
 * free port, a socket in that directory): the shared server of a run is one, and fault tests
 * start their own to kill -9 and restart on the same port and data. initdb and postgres refuse
 * to run as root: as root, both run as the `postgres` user, in a directory it owns.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { pickFreePort } from "./ports.js";
import { waitFor } from "./wait.js";

/** PG_BIN, or the newest Debian server under /usr/lib/postgresql, or null. */
function findPostgresBin(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], "bin");
}

const PG_BIN = findPostgresBin();

export const NO_POSTGRES =
  "no PostgreSQL server binaries (initdb, pg_ctl) were found: install them (Debian: `apt-get install postgresql`), " +
  "set PG_BIN to their folder, or set PG_TEST_URL to an existing server (trust auth, a user allowed to CREATE DATABASE)";

export type TestDatabase = { url: string; name: string; drop(): Promise<void> };

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** One statement on a connection of its own: its rows. */
export async function sql<T extends pg.QueryResultRow = any>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

/** A fresh database `audit_<random>` on a server. */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `audit_${randomBytes(6).toString("hex")}`;
  await sql(serverUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(serverUrl, name),
    name,
    drop: async () => void (await sql(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

export function canStartPostgres(): boolean {
  return PG_BIN !== null;
}

export type PostgresInstance = {
  readonly port: number;
  /** URL of the `postgres` database of this instance. */
  readonly url: string;
  readonly dataDir: string;
  pid(): number;
  /** SIGKILL the postmaster (its children exit when they notice). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  log(): string;
};

/** Runs a command as the postgres user when we are root, as ourselves otherwise. */
function asOwner(cmd: string, args: string[]): ReturnType<typeof spawnSync> {
  if (process.getuid?.() === 0) return spawnSync("runuser", ["-u", "postgres", "--", cmd, ...args], { encoding: "utf8" });
  return spawnSync(cmd, args, { encoding: "utf8" });
}

function postgresUid(): { uid: number; gid: number } {
  const out = execFileSync("id", ["postgres"], { encoding: "utf8" });
  return { uid: Number(/uid=(\d+)/.exec(out)![1]), gid: Number(/gid=(\d+)/.exec(out)![1]) };
}

export async function startPostgres(): Promise<PostgresInstance> {
  if (PG_BIN === null) throw new Error(NO_POSTGRES);
  const bin = PG_BIN;
  const root = mkdtempSync(join(tmpdir(), "audit-pg-"));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUid();
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  const dataDir = join(root, "data");
  const logFile = join(root, "log");
  const init = asOwner(join(bin, "initdb"), ["-D", dataDir, "-A", "trust", "-U", "postgres", "--no-sync"]);
  if (init.status !== 0) throw new Error(`initdb failed: ${String(init.stderr)}`);
  const port = await pickFreePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const ctl = (...args: string[]) => asOwner(join(bin, "pg_ctl"), ["-D", dataDir, ...args]);
  const pid = () => Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const up = async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query("SELECT 1");
      return true;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  const instance: PostgresInstance = {
    port,
    url,
    dataDir,
    pid,
    log: () => (existsSync(logFile) ? readFileSync(logFile, "utf8") : ""),
    start: async () => {
      // fsync off: the tests kill the server process, not the machine.
      const r = ctl("-o", `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`, "-l", logFile, "-w", "start");
      if (r.status !== 0) throw new Error(`pg_ctl start failed: ${String(r.stderr)} ${instance.log().slice(-2000)}`);
      await waitFor(up, { timeoutMs: 30_000, message: "private PostgreSQL accepts connections" });
    },
    kill: async () => {
      const p = pid();
      process.kill(p, "SIGKILL");
      await waitFor(() => !alive(p), { timeoutMs: 10_000, message: "postmaster gone" });
      // Backends notice the postmaster's death and exit; a new one cannot start while they hold the shared memory.
      await waitFor(() => asOwner(join(bin, "pg_ctl"), ["-D", dataDir, "status"]).status !== 0, { timeoutMs: 10_000, message: "no server running" });
    },
    stop: async () => {
      ctl("-m", "immediate", "-w", "stop");
      rmSync(root, { recursive: true, force: true });
    },
  };
  await instance.start();
  return instance;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
