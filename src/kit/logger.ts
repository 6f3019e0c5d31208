/**
 * The logging port of the service layer: the subset of pino's API the services use, so they
 * can be given a pino child (production) or a test sink without importing pino themselves.
 */
export type LogFn = {
  (obj: object, msg?: string): void;
  (msg: string): void;
};

export type Logger = {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: Record<string, unknown>): Logger;
};

/** A logger that drops everything (unit tests that do not look at logs). */
export const silentLogger: Logger = {
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  child: () => silentLogger,
};

