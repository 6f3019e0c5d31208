/**
 * Typed errors of the SDK: one class per code of the registry's error catalogue, so callers
 * can `instanceof` instead of comparing strings, plus the two ways a request can fail without
 * an answer (timeout, nobody listening). The code classes are made by one factory from the
 * catalogue (src/protocol/errors.ts): a code added there gets its class here.
 */
import { errors, type Msg } from "@nats-io/nats-core";
import { ERROR_CATALOGUE, ErrorCode, isErrorCode, SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER, type ErrorIssue } from "../protocol/errors.js";

export { ErrorCode, SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER, type ErrorIssue };

export type ReplyErrorOptions = { status?: number; issues?: readonly ErrorIssue[]; cause?: unknown };

/** An error reply of the registry (PROTOCOL.md section 1). */
export class RegistryClientError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues: readonly ErrorIssue[];

  constructor(code: ErrorCode, message: string, options: ReplyErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RegistryClientError";
    this.code = code;
    this.status = options.status ?? ERROR_CATALOGUE[code].status;
    this.issues = options.issues ?? [];
  }
}

/** The class of one code: `new NotFoundError(message, options)`, and `instanceof` works. */
export type CodeErrorClass<C extends ErrorCode> = {
  new (message: string, options?: ReplyErrorOptions): RegistryClientError & { readonly code: C };
  readonly code: C;
};

function codeError<C extends ErrorCode>(code: C, name: string): CodeErrorClass<C> {
  const cls = class extends RegistryClientError {
    static readonly code = code;
    declare readonly code: C;
    constructor(message: string, options?: ReplyErrorOptions) {
      super(code, message, options);
      this.name = name;
    }
  };
  Object.defineProperty(cls, "name", { value: name });
  return cls;
}

/** `invalid_request` → `InvalidRequestError`. */
const className = (code: ErrorCode): string => `${code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())}Error`;

const BY_CODE = Object.fromEntries(
  (Object.keys(ERROR_CATALOGUE) as ErrorCode[]).map((code) => [code, codeError(code, className(code))]),
) as { readonly [C in ErrorCode]: CodeErrorClass<C> };

export const InvalidRequestError = BY_CODE.invalid_request;
export type InvalidRequestError = InstanceType<typeof InvalidRequestError>;
export const InvalidSpecError = BY_CODE.invalid_spec;
export type InvalidSpecError = InstanceType<typeof InvalidSpecError>;
export const InvalidCardError = BY_CODE.invalid_card;
export type InvalidCardError = InstanceType<typeof InvalidCardError>;
export const NotFoundError = BY_CODE.not_found;
export type NotFoundError = InstanceType<typeof NotFoundError>;
export const UnknownInstanceError = BY_CODE.unknown_instance;
export type UnknownInstanceError = InstanceType<typeof UnknownInstanceError>;
export const NoRouteError = BY_CODE.no_route;
export type NoRouteError = InstanceType<typeof NoRouteError>;
export const ConflictError = BY_CODE.conflict;
export type ConflictError = InstanceType<typeof ConflictError>;
export const PayloadTooLargeError = BY_CODE.payload_too_large;
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>;
export const LimitExceededError = BY_CODE.limit_exceeded;
export type LimitExceededError = InstanceType<typeof LimitExceededError>;
export const UnavailableError = BY_CODE.unavailable;
export type UnavailableError = InstanceType<typeof UnavailableError>;
export const StaleViewError = BY_CODE.stale_view;
export type StaleViewError = InstanceType<typeof StaleViewError>;
export const InternalError = BY_CODE.internal;
export type InternalError = InstanceType<typeof InternalError>;

/** The error class of a code, for callers that hold the code as data. */
export const errorClassOf = <C extends ErrorCode>(code: C): CodeErrorClass<C> => BY_CODE[code] as CodeErrorClass<C>;

// When the body names no known code (a newer registry, or a reply the framework built), the
// status alone picks the closest class.
const BY_STATUS: Readonly<Record<number, CodeErrorClass<ErrorCode>>> = {
  400: InvalidRequestError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: LimitExceededError,
  503: UnavailableError,
};

/** No answer within the timeout: the registry may be overloaded, partitioned or gone. */
export class RegistryTimeoutError extends Error {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`registry did not answer on ${subject} within ${timeoutMs} ms`, options);
    this.name = "RegistryTimeoutError";
  }
}

/** Nobody listens on the subject (NATS "no responders"), or the connection is closed. */
export class RegistryUnreachableError extends Error {
  constructor(
    readonly subject: string,
    reason = "no registry is listening",
    options?: { cause?: unknown },
  ) {
    super(`${reason} on ${subject}`, options);
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
  if (headerCode !== "" || (isErrorBody(body) && isErrorCode(body.error.code))) {
    throw errorFrom(Number.isFinite(status) ? status : undefined, headerMessage, body);
  }
  if (parseError !== undefined) throw new InternalError(`registry reply is not JSON: ${String(parseError)}`, { status: 500 });
  return body as T;
}

function errorFrom(status: number | undefined, headerMessage: string, body: unknown): RegistryClientError {
  const err = isErrorBody(body) ? body.error : undefined;
  const message = typeof err?.message === "string" && err.message !== "" ? err.message : headerMessage || "registry error";
  const issues = parseIssues(err?.issues);
  if (isErrorCode(err?.code)) return new BY_CODE[err.code](message, { issues, ...(status ? { status } : {}) });
  const Cls = (status !== undefined && BY_STATUS[status]) || InternalError;
  return new Cls(message, { issues, ...(status ? { status } : {}) });
}

/**
 * Maps what `nc.request` rejects with to the SDK's errors; anything else passes through.
 * `nobody` says who is missing when nothing listens: the registry, unless the subject is
 * answered by another process (the audit mirror's `history`).
 */
export function requestFailure(e: unknown, subject: string, timeoutMs: number, nobody = "no registry is listening"): unknown {
  const denied = permissionDenied(e);
  if (denied) return denied;
  const cause = e instanceof errors.RequestError && e.cause !== undefined ? e.cause : e;
  if (cause instanceof errors.NoRespondersError || (e instanceof errors.RequestError && e.isNoResponders())) {
    return new RegistryUnreachableError(subject, nobody, { cause: e });
  }
  if (cause instanceof errors.TimeoutError) return new RegistryTimeoutError(subject, timeoutMs, { cause: e });
  if (cause instanceof errors.ClosedConnectionError) return new RegistryUnreachableError(subject, "the NATS connection is closed", { cause: e });
  if (cause instanceof errors.DrainingConnectionError) return new RegistryUnreachableError(subject, "the NATS connection is draining", { cause: e });
  return e;
}
