/**
 * The discovery API's optional bearer token (RFC 6750): with one configured, every request
 * carries `Authorization: Bearer <token>`, compared as digests so the time taken says nothing
 * about the token's length or prefix.
 */
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

export type BearerRefusal = { message: string; challenge: string };

/** Why the request is refused, or null when it may go on (always null without a token). */
export function bearerRefusal(authorization: string | undefined, token: string | undefined): BearerRefusal | null {
  if (token === undefined) return null;
  const given = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim() ?? "";
  if (timingSafeEqual(digest(given), digest(token))) return null;
  return given === ""
    ? { message: "a bearer token is required", challenge: 'Bearer realm="agent-registry-discovery"' }
    : { message: "the bearer token is not valid", challenge: 'Bearer realm="agent-registry-discovery", error="invalid_token"' };
}
