/**
 * The one way a process of the project makes its root logger: pino, JSON lines, with the
 * redaction list of log-redaction.ts. The service writes to stdout; the fronts that own stdout
 * for a protocol (`mcp` over stdio) or that exit soon after their last line write to stderr,
 * synchronously, so the last lines before an exit are not lost. A file of its own so that
 * importing the Logger type (kit/logger.ts) never loads pino.
 */
import { pino, type DestinationStream } from "pino";
import { LOG_REDACT_PATHS } from "./log-redaction.js";
import type { Logger } from "./logger.js";

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";

export type LoggerOptions = {
  level: LogLevel;
  /** Fields on every line, such as `{ service: "agent-registry" }` or `{ component: "mcp" }`
   * (pino's own, pid and hostname, when not given). */
  base?: Record<string, unknown>;
  /** stdout (the default), stderr with synchronous writes, or a stream of the caller's (tests). */
  to?: "stdout" | "stderr" | DestinationStream;
};

export function createLogger({ level, base, to = "stdout" }: LoggerOptions): Logger {
  const options = { level, redact: [...LOG_REDACT_PATHS], ...(base ? { base } : {}) };
  if (to === "stdout") return pino(options) as unknown as Logger;
  return pino(options, to === "stderr" ? pino.destination({ dest: 2, sync: true }) : to) as unknown as Logger;
}
