/**
 * A failure of a registry query as the discovery API answers it: the registry's refusals keep
 * their meaning under ARD's codes, a registry that does not answer is 503, anything else 500.
 */
import { PermissionDeniedError, RegistryClientError, RegistryTimeoutError, RegistryUnreachableError } from "../client/errors.js";
import { ArdError, ArdErrorCode } from "./ard-error.js";

export function mapRegistryFailure(err: unknown): ArdError {
  if (err instanceof RegistryTimeoutError || err instanceof RegistryUnreachableError) {
    return new ArdError(503, ArdErrorCode.Unavailable, "the registry did not answer; try again");
  }
  // The front's NATS user may query some tenants' views only (per-tenant permissions).
  if (err instanceof PermissionDeniedError) return new ArdError(403, ArdErrorCode.PermissionDenied, "this registry does not serve that view");
  if (err instanceof RegistryClientError) {
    if (err.code === "not_found") return new ArdError(404, ArdErrorCode.NotFound, err.message);
    if (err.code === "invalid_request") return new ArdError(400, ArdErrorCode.InvalidArgument, err.message);
    if (err.status === 429) return new ArdError(429, ArdErrorCode.RateLimitExceeded, err.message);
    if (err.status === 503) return new ArdError(503, ArdErrorCode.Unavailable, err.message);
  }
  return new ArdError(500, ArdErrorCode.Internal, "the discovery request failed");
}
