/**
 * The page's optional bearer token. A browser's EventSource cannot set headers, so the token
 * is also taken from a cookie (set when the page is first opened with ?token=) and from the
 * query string; and as the password of HTTP basic auth (any user name), so that a browser
 * opening /ui/ bare asks for it and then sends it with every request of the page. Compared
 * in constant time, as digests so that lengths do not leak either.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const TOKEN_COOKIE = "registry_ui_token";
/** Longer tokens are refused before hashing: every input is bounded. */
const MAX_TOKEN_LENGTH = 1024;

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

export type TokenSource = "header" | "basic" | "cookie" | "query";

/** The token a request offers and where it came from, or null when it offers none. */
export function offeredToken(req: IncomingMessage, query: URLSearchParams): { token: string; source: TokenSource } | null {
  const auth = req.headers.authorization;
  if (typeof auth === "string" && /^Bearer /i.test(auth)) return { token: auth.slice(7).trim(), source: "header" };
  if (typeof auth === "string" && /^Basic /i.test(auth) && auth.length <= 4 * MAX_TOKEN_LENGTH) {
    const pair = Buffer.from(auth.slice(6).trim(), "base64").toString("utf8");
    const colon = pair.indexOf(":");
    return { token: colon >= 0 ? pair.slice(colon + 1) : pair, source: "basic" };
  }
  const fromQuery = query.get("token");
  if (fromQuery !== null) return { token: fromQuery, source: "query" };
  const cookie = cookieValue(req.headers.cookie, TOKEN_COOKIE);
  if (cookie !== undefined) return { token: cookie, source: "cookie" };
  return null;
}

/** A check bound to the configured token; always true when none is configured. */
export function tokenCheck(expected: string | undefined): (offered: string | undefined) => boolean {
  if (expected === undefined) return () => true;
  const want = digest(expected);
  return (offered) => offered !== undefined && offered.length <= MAX_TOKEN_LENGTH && timingSafeEqual(digest(offered), want);
}

/** Scoped to /ui, invisible to scripts, never sent cross-site. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/ui; HttpOnly; SameSite=Strict`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
