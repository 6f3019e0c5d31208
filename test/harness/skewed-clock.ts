/**
 * Runs a child process on a clock that is off by a fixed offset, with libfaketime (the Debian
 * package `faketime`). The library is preloaded through the environment rather than by the
 * `faketime` command, which forks and waits: the child's pid must be node's own so that a
 * fault test can kill it. libfaketime shifts every clock node reads (Date, timers' monotonic
 * clock) by the same offset, so the process runs normally, only "in another time zone of
 * epoch milliseconds".
 */
import { spawnSync } from "node:child_process";

/** The dynamic loader expands $LIB to the multiarch directory, as the faketime command does. */
const LIBFAKETIME = "/usr/$LIB/faketime/libfaketime.so.1";

/** Environment that puts a child process `offset` off (libfaketime syntax: "-60s", "+60s"). */
export function skewedClockEnv(offset: string): Record<string, string> {
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset };
}

/** The offset in milliseconds that `offset` ("+60s", "-60s") stands for. */
export function offsetMs(offset: string): number {
  const m = /^([+-])(\d+)s$/.exec(offset);
  if (!m) throw new Error(`unsupported offset ${offset}`);
  return (m[1] === "-" ? -1 : 1) * Number(m[2]) * 1000;
}

let checked: boolean | undefined;

/** True when a node child under skewedClockEnv("+60s") really sees a clock 60 s ahead. */
export function canSkewClocks(): boolean {
  if (checked !== undefined) return checked;
  const before = Date.now();
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(Date.now()))"], {
    env: { ...process.env, ...skewedClockEnv("+60s") },
    encoding: "utf8",
    timeout: 10_000,
  });
  const seen = Number(r.stdout);
  checked = r.status === 0 && Number.isFinite(seen) && seen - before > 50_000 && seen - Date.now() < 70_000;
  return checked;
}
