/**
 * Why a registration's signature was refused, as one stable token (docs/errors.md): the reply
 * is `invalid_request` whose issue names the signature's path and starts with the reason, so a
 * client written for v1.1 handles it as any bad request, and a v1.2 one can branch on the token.
 */
import { invalidRequest, RegistryError } from "../errors.js";

export const TRUST_REASONS = [
  "malformed_signature",
  "too_many_signatures",
  "signature_required",
  "alg_not_allowed",
  "missing_kid",
  "unknown_key",
  "not_authorized",
  "key_expired",
  "key_not_yet_valid",
  "bad_signature",
  "unsigned_fields",
  "signature_not_supported",
] as const;
export type TrustReason = (typeof TRUST_REASONS)[number];

export function trustRefusal(reason: TrustReason, path: string, detail: string): RegistryError {
  return invalidRequest(`register: signature refused (${reason}): ${detail}; nothing was stored`, [{ path, message: `${reason}: ${detail}` }]);
}

/** The reason token of a refusal trustRefusal made; undefined for any other error. */
export function refusalReason(e: unknown): TrustReason | undefined {
  if (!(e instanceof RegistryError)) return undefined;
  const token = e.issues?.[0]?.message.split(":")[0];
  return TRUST_REASONS.find((r) => r === token);
}
