/**
 * Timer callbacks that cannot kill the process. A throw (or a rejected promise) out of a
 * setInterval callback is an uncaught exception, and Node exits on it: one unreadable record
 * once made the schema-sharing timer do that at every start (issue 14). Every periodic job of
 * the service goes through `guarded`, which logs the failure and lets the next tick try again.
 */
import type { Logger } from "./logger.js";

/** A failing job is logged at most this often (a tick every 50 ms must not flood the log). */
const LOG_EVERY_MS = 60_000;

export function guarded(log: Logger, job: string, fn: () => unknown): () => void {
  let lastLogged = -Infinity;
  let suppressed = 0;
  const failed = (err: unknown): void => {
    const now = Date.now();
    if (now - lastLogged < LOG_EVERY_MS) {
      suppressed++;
      return;
    }
    log.error({ err, job, failures_not_logged: suppressed }, `${job} failed; it runs again on its next tick`);
    lastLogged = now;
    suppressed = 0;
  };
  return () => {
    try {
      const result = fn();
      if (result instanceof Promise) result.catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}

/** setInterval with a guarded callback, not keeping the process alive. */
export function guardedInterval(log: Logger, job: string, fn: () => unknown, ms: number): NodeJS.Timeout {
  const timer = setInterval(guarded(log, job, fn), ms);
  timer.unref();
  return timer;
}
