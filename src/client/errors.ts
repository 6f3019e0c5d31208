/**
 * Typed errors of the SDK: one class per code of the registry's error catalogue, so callers
 * can `instanceof` instead of comparing strings, plus the two ways a request can fail without
 * an answer (timeout, nobody listening).
 */
import { errors, type Msg } from "@nats-io/nats-core";
import { ERROR_CATALOGUE, ErrorCode, type ErrorIssue } from "../domain/errors.js";

export { ErrorCode, type ErrorIssue };

export const SERVICE_ERROR_CODE_HEADER = "Nats-Service-Error-Code";
export const SERVICE_ERROR_HEADER = "Nats-Service-Error";

/** An error reply of the registry (PROTOCOL.md section 1). */
export class RegistryClientError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues: readonly ErrorIssue[];

  constructor(code: ErrorCode, message: string, options: ReplyErrorOptions = {}) {
    super(message);
    this.name = "RegistryClientError";
    this.code = code;
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
    this.issues = options.issues ?? [];
  }
}

type ReplyErrorOptions = { status?: number; issues?: readonly ErrorIssue[] };
type Ctor = new (message: string, options?: ReplyErrorOptions) => RegistryClientError;

export class InvalidRequestError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.InvalidRequest, message, options);
    this.name = "InvalidRequestError";
  }
}
export class InvalidSpecError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.InvalidSpec, message, options);
    this.name = "InvalidSpecError";
  }
}
export class NotFoundError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.NotFound, message, options);
    this.name = "NotFoundError";
  }
}
export class UnknownInstanceError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.UnknownInstance, message, options);
    this.name = "UnknownInstanceError";
  }
}
export class NoRouteError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.NoRoute, message, options);
    this.name = "NoRouteError";
  }
}
export class ConflictError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.Conflict, message, options);
    this.name = "ConflictError";
  }
}
export class PayloadTooLargeError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.PayloadTooLarge, message, options);
    this.name = "PayloadTooLargeError";
  }
}
export class UnavailableError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.Unavailable, message, options);
    this.name = "UnavailableError";
  }
}
export class StaleViewError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.StaleView, message, options);
    this.name = "StaleViewError";
  }
}
export class InternalError extends RegistryClientError {
  constructor(message: string, options?: ReplyErrorOptions) {
    super(ErrorCode.Internal, message, options);
    this.name = "InternalError";
  }
}

const BY_CODE: Readonly<Record<ErrorCode, Ctor>> = {
  invalid_request: InvalidRequestError,
  invalid_spec: InvalidSpecError,
  not_found: NotFoundError,
  unknown_instance: UnknownInstanceError,
  no_route: NoRouteError,
  conflict: ConflictError,
  payload_too_large: PayloadTooLargeError,
  unavailable: UnavailableError,
  stale_view: StaleViewError,
  internal: InternalError,
};

// When the body names no known code (a newer registry, or a reply the framework built), the
// status alone picks the closest class.
const BY_STATUS: Readonly<Record<number, Ctor>> = {
  400: InvalidRequestError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  503: UnavailableError,
};

/** No answer within the timeout: the registry may be overloaded, partitioned or gone. */
export class RegistryTimeoutError extends Error {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`registry did not answer on ${subject} within ${timeoutMs} ms`);
    this.name = "RegistryTimeoutError";
  }
}

/** Nobody listens on the subject (NATS "no responders"), or the connection is closed. */
export class RegistryUnreachableError extends Error {
  constructor(
    readonly subject: string,
    reason = "no registry is listening",
  ) {
    super(`${reason} on ${subject}`);
    this.name = "RegistryUnreachableError";
  }
}

/**
 * The NATS server refused the operation for this user (its permissions do not allow the
 * subject): a deployment problem, never retried. A refused `subscription` to `_INBOX.…`
 * usually means the connection needs its private `inboxPrefix` (docs/security.md).
 */
export class PermissionDeniedError extends Error {
  constructor(
    readonly operation: "publish" | "subscription",
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    const hint =
      operation === "subscription" && /^_INBOX\./.test(subject)
        ? "; replies need the connection's private inbox prefix (inboxPrefix, CLI --inbox-prefix, env NATS_INBOX_PREFIX)"
        : "";
    super(`permission denied: this NATS user may not ${operation === "publish" ? "publish to" : "subscribe to"} ${subject}${hint}`, options);
    this.name = "PermissionDeniedError";
  }
}

/**
 * The permission violation behind an error of nats.js (a request, a subscription or a
 * JetStream call wraps it in `cause`), as a {@link PermissionDeniedError}; undefined otherwise.
 */
export function permissionDenied(e: unknown): PermissionDeniedError | undefined {
  for (let cur = e, depth = 0; cur instanceof Error && depth < 5; cur = cur.cause, depth++) {
    if (cur instanceof PermissionDeniedError) return cur;
    if (cur instanceof errors.PermissionViolationError) return new PermissionDeniedError(cur.operation, cur.subject, { cause: e });
  }
  return undefined;
}

/** True for failures worth retrying later: no answer, or the registry said it is unavailable. */
export function isTransient(e: unknown): boolean {
  if (e instanceof RegistryTimeoutError || e instanceof RegistryUnreachableError) return true;
  return e instanceof RegistryClientError && (e.status >= 500 || e.code === ErrorCode.StaleView);
}

const isCode = (v: unknown): v is ErrorCode => typeof v === "string" && Object.hasOwn(BY_CODE, v);

type ErrorBody = { error: { code?: unknown; message?: unknown; issues?: unknown } };
const isErrorBody = (v: unknown): v is ErrorBody =>
  typeof v === "object" && v !== null && typeof (v as { error?: unknown }).error === "object" && (v as ErrorBody).error !== null;

function parseIssues(v: unknown): ErrorIssue[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((i): i is { path?: unknown; message?: unknown } => typeof i === "object" && i !== null)
    .map((i) => ({ path: String(i.path ?? ""), message: String(i.message ?? "") }));
}

/**
 * Turns a reply into its JSON result, or throws the typed error it carries. An error is
 * recognised by the `Nats-Service-Error-Code` header, or by a body `{"error":{"code":...}}`.
 */
export function decodeReply<T = unknown>(msg: Pick<Msg, "data" | "headers">): T {
  const headerCode = msg.headers?.get(SERVICE_ERROR_CODE_HEADER) ?? "";
  const headerMessage = msg.headers?.get(SERVICE_ERROR_HEADER) ?? "";
  let body: unknown = {};
  let parseError: unknown;
  if (msg.data.length > 0) {
    try {
      body = JSON.parse(new TextDecoder().decode(msg.data));
    } catch (e) {
      parseError = e;
    }
  }
  const status = Number.parseInt(headerCode, 10);
  if (headerCode !== "" || (isErrorBody(body) && isCode(body.error.code))) {
    throw errorFrom(Number.isFinite(status) ? status : undefined, headerMessage, body);
  }
  if (parseError !== undefined) throw new InternalError(`registry reply is not JSON: ${String(parseError)}`, { status: 500 });
  return body as T;
}

function errorFrom(status: number | undefined, headerMessage: string, body: unknown): RegistryClientError {
  const err = isErrorBody(body) ? body.error : undefined;
  const message = typeof err?.message === "string" && err.message !== "" ? err.message : headerMessage || "registry error";
  const issues = parseIssues(err?.issues);
  if (isCode(err?.code)) return new BY_CODE[err.code](message, { issues, ...(status ? { status } : {}) });
  const Cls = (status !== undefined && BY_STATUS[status]) || InternalError;
  return new Cls(message, { issues, ...(status ? { status } : {}) });
}

/** Maps what `nc.request` rejects with to the SDK's errors; anything else passes through. */
export function requestFailure(e: unknown, subject: string, timeoutMs: number): unknown {
  const denied = permissionDenied(e);
  if (denied) return denied;
  const cause = e instanceof errors.RequestError && e.cause !== undefined ? e.cause : e;
  if (cause instanceof errors.NoRespondersError || (e instanceof errors.RequestError && e.isNoResponders())) {
    return new RegistryUnreachableError(subject);
  }
  if (cause instanceof errors.TimeoutError) return new RegistryTimeoutError(subject, timeoutMs);
  if (cause instanceof errors.ClosedConnectionError) return new RegistryUnreachableError(subject, "the NATS connection is closed");
  if (cause instanceof errors.DrainingConnectionError) return new RegistryUnreachableError(subject, "the NATS connection is draining");
  return e;
}
