/**
 * The one error catalogue of the registry (PROTOCOL.md section 1). Every failure that
 * reaches a client is a RegistryError with a stable `code`; the NATS adapter turns it into
 * the `Nats-Service-Error*` headers and the JSON error body.
 */

export const ErrorCode = {
  InvalidRequest: "invalid_request",
  InvalidSpec: "invalid_spec",
  NotFound: "not_found",
  UnknownInstance: "unknown_instance",
  NoRoute: "no_route",
  Conflict: "conflict",
  PayloadTooLarge: "payload_too_large",
  Unavailable: "unavailable",
  StaleView: "stale_view",
  Internal: "internal",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP-like status and the documented meaning of each code; docs/errors.md is checked against it. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, { status: number; when: string }>> = {
  invalid_request: { status: 400, when: "not JSON, wrong shape, bad subject token, subject/payload mismatch" },
  invalid_spec: { status: 400, when: "the AgentSpec breaks a rule of PROTOCOL.md section 3" },
  not_found: { status: 404, when: "unknown agent_type" },
  unknown_instance: {
    status: 404,
    when: "heartbeat/deregister for an instance the registry does not hold (evicted or never registered): register again",
  },
  no_route: { status: 404, when: "route: no ready agent scores above zero" },
  conflict: {
    status: 409,
    when: "nats_subject used by another agent type; duplicate capability under policy reject; lost a write race 5 times in a row",
  },
  payload_too_large: { status: 413, when: "body over the size limit (default 256 KiB), refused before any parsing" },
  unavailable: { status: 503, when: "the store cannot be reached; or the agent type is over a per-type budget (rate limit)" },
  stale_view: { status: 503, when: "min_revision was not reached by this replica's view in time (2 s)" },
  internal: { status: 500, when: "anything else; logged with a correlation id that the message repeats" },
};

export type ErrorIssue = { path: string; message: string };

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
  toBody(): { error: { code: ErrorCode; message: string; issues?: ErrorIssue[] } } {
    const error: { code: ErrorCode; message: string; issues?: ErrorIssue[] } = { code: this.code, message: this.message };
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

export const invalidRequest = (message: string, issues?: readonly ErrorIssue[]): RegistryError =>
  new RegistryError(ErrorCode.InvalidRequest, message, issues ? { issues } : {});
export const invalidSpec = (message: string, issues?: readonly ErrorIssue[]): RegistryError =>
  new RegistryError(ErrorCode.InvalidSpec, message, issues ? { issues } : {});
export const notFound = (message: string): RegistryError => new RegistryError(ErrorCode.NotFound, message);
export const unknownInstance = (agentType: string, instanceId: string): RegistryError =>
  new RegistryError(
    ErrorCode.UnknownInstance,
    `instance ${instanceId} of ${agentType} is not registered (evicted or never registered): register again`,
  );
export const conflict = (message: string): RegistryError => new RegistryError(ErrorCode.Conflict, message);
