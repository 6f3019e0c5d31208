/**
 * The error catalogue of PROTOCOL.md section 1: every code a reply can carry, its HTTP-like
 * status and when it is used. The service throws these codes, the SDK maps them to its error
 * classes, and docs/errors.md is checked against this table.
 */

export const ErrorCode = {
  InvalidRequest: "invalid_request",
  InvalidSpec: "invalid_spec",
  InvalidCard: "invalid_card",
  NotFound: "not_found",
  UnknownInstance: "unknown_instance",
  NoRoute: "no_route",
  Conflict: "conflict",
  PayloadTooLarge: "payload_too_large",
  LimitExceeded: "limit_exceeded",
  Unavailable: "unavailable",
  StaleView: "stale_view",
  Internal: "internal",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** HTTP-like status and the documented meaning of each code. */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, { readonly status: number; readonly when: string }>> = {
  invalid_request: { status: 400, when: "not JSON, wrong shape, bad subject token, subject/payload mismatch" },
  invalid_spec: { status: 400, when: "the AgentSpec breaks a rule of PROTOCOL.md section 3" },
  invalid_card: {
    status: 400,
    when: "an A2A agent card or MCP tool spec the registry cannot use, or one that breaks its schema under strict (PROTOCOL.md section 10)",
  },
  not_found: { status: 404, when: "unknown agent_type; a schema version that is not stored" },
  unknown_instance: {
    status: 404,
    when: "heartbeat/deregister for an instance the registry does not hold (evicted or never registered): register again",
  },
  no_route: { status: 404, when: "route: no ready agent scores above zero" },
  conflict: {
    status: 409,
    when:
      "nats_subject used by another agent type; duplicate capability under policy reject; another spec under a stored (agent_type, version) without replace; other content under a stored schema (name, version); lost a write race 5 times in a row",
  },
  payload_too_large: { status: 413, when: "body over the size limit (default 256 KiB), refused before any parsing" },
  limit_exceeded: {
    status: 429,
    when: "a configured quota would be exceeded (instance metadata size, instances per agent type, agent types per tenant, schema versions, the store's size, a payload check's time); the message names the limit",
  },
  unavailable: { status: 503, when: "the store cannot be reached; or the agent type is over a per-type budget (rate limit); or payload checks are busy" },
  stale_view: { status: 503, when: "min_revision was not reached by this replica's view in time (2 s)" },
  internal: { status: 500, when: "anything else; logged with a correlation id that the message repeats" },
};

export type ErrorIssue = { path: string; message: string };

/** The body of an error reply; the headers below carry the status and the message too. */
export type ErrorBody = { error: { code: ErrorCode; message: string; issues?: ErrorIssue[] } };

export const SERVICE_ERROR_CODE_HEADER = "Nats-Service-Error-Code";
export const SERVICE_ERROR_HEADER = "Nats-Service-Error";

export const isErrorCode = (v: unknown): v is ErrorCode => typeof v === "string" && Object.hasOwn(ERROR_CATALOGUE, v);
