/**
 * The service's error: every failure that reaches a client is a RegistryError with a stable
 * `code` of the catalogue (src/protocol/errors.ts); the NATS adapter turns it into the
 * `Nats-Service-Error*` headers and the JSON error body.
 */

import { ERROR_CATALOGUE, ErrorCode, type ErrorBody, type ErrorIssue } from "../protocol/errors.js";

export { ERROR_CATALOGUE, ErrorCode, type ErrorIssue };

export class RegistryError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues: readonly ErrorIssue[] | undefined;

  constructor(code: ErrorCode, message: string, options: { issues?: readonly ErrorIssue[]; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RegistryError";
    this.code = code;
    this.status = ERROR_CATALOGUE[code].status;
    this.issues = options.issues && options.issues.length > 0 ? options.issues : undefined;
  }

  /** The JSON error body of PROTOCOL.md section 1. */
  toBody(): ErrorBody {
    const error: ErrorBody["error"] = { code: this.code, message: this.message };
    if (this.issues) error.issues = [...this.issues];
    return { error };
  }
}

export const isRegistryError = (e: unknown): e is RegistryError => e instanceof RegistryError;

/**
 * An agent type over one of its budgets (requests per second, spec validation time): answered
 * as `unavailable` (503), so clients retry with backoff; metrics count it as `rate_limited`.
 */
export class RateLimitedError extends RegistryError {
  constructor(message: string) {
    super(ErrorCode.Unavailable, message);
    this.name = "RateLimitedError";
  }
}

/**
 * Work refused at once because too much of it already waits for the store (heartbeat writes
 * past REGISTRY_MAX_HEARTBEAT_WRITES): `unavailable` (503) to the client, which retries;
 * metrics count it as `shed`, apart from the store's own failures.
 */
export class ShedError extends RegistryError {
  constructor(message: string) {
    super(ErrorCode.Unavailable, message);
    this.name = "ShedError";
  }
}

export const invalidRequest = (message: string, issues?: readonly ErrorIssue[]): RegistryError =>
  new RegistryError(ErrorCode.InvalidRequest, message, issues ? { issues } : {});
export const invalidSpec = (message: string, issues?: readonly ErrorIssue[]): RegistryError =>
  new RegistryError(ErrorCode.InvalidSpec, message, issues ? { issues } : {});
export const invalidCard = (message: string, issues?: readonly ErrorIssue[]): RegistryError =>
  new RegistryError(ErrorCode.InvalidCard, message, issues ? { issues } : {});
export const notFound = (message: string): RegistryError => new RegistryError(ErrorCode.NotFound, message);
export const unknownInstance = (agentType: string, instanceId: string): RegistryError =>
  new RegistryError(
    ErrorCode.UnknownInstance,
    `instance ${instanceId} of ${agentType} is not registered (evicted or never registered): register again`,
  );
export const conflict = (message: string): RegistryError => new RegistryError(ErrorCode.Conflict, message);
/** A quota: `setting` is the environment variable that raises it, so the message says what to change. */
export const limitExceeded = (message: string, setting: string, limit: number): RegistryError =>
  new RegistryError(ErrorCode.LimitExceeded, `${message} (limit ${limit}, ${setting})`);
