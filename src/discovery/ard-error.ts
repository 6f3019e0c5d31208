/**
 * The errors of the discovery API as ARD names them (ard-spec v0.9, appendix B, and the
 * OpenAPI document's `Error`: `{errorCode, message}`), with their HTTP status. Codes the
 * appendix lacks (403, 405, 413, 501, 503) follow its upper-case style; docs/discovery.md lists them all.
 */
export const ArdErrorCode = {
  InvalidArgument: "INVALID_ARGUMENT",
  Unauthenticated: "UNAUTHENTICATED",
  PermissionDenied: "PERMISSION_DENIED",
  NotFound: "NOT_FOUND",
  MethodNotAllowed: "METHOD_NOT_ALLOWED",
  PayloadTooLarge: "PAYLOAD_TOO_LARGE",
  RateLimitExceeded: "RATE_LIMIT_EXCEEDED",
  /** The MCP Registry API's optional publish and delete, which this read-only front does not serve (501). */
  NotImplemented: "NOT_IMPLEMENTED",
  Internal: "INTERNAL_ERROR",
  Unavailable: "UNAVAILABLE",
} as const;
export type ArdErrorCode = (typeof ArdErrorCode)[keyof typeof ArdErrorCode];

export class ArdError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: ArdErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ArdError";
  }
}

export const invalidArgument = (message: string): ArdError => new ArdError(400, ArdErrorCode.InvalidArgument, message);
export const notFound = (message: string): ArdError => new ArdError(404, ArdErrorCode.NotFound, message);
