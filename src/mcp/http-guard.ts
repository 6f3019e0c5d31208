/**
 * Who may talk to the MCP HTTP endpoint. A web page can make a browser send requests to a
 * server on the user's machine, and with DNS rebinding its own name can resolve to 127.0.0.1:
 * the `Host` header then names the attacker's host, and `Origin` its page. So every request
 * must name an allowed host, any `Origin` must be an allowed one (clients that are not browsers
 * send none), and when a token is configured it must come as `Authorization: Bearer`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { hostAllowed, isLoopbackHost } from "../kit/hosts.js";

export type HttpGuardOptions = {
  /** Host names (no port) a request's `Host` may name. */
  allowedHosts: readonly string[];
  /** Exact origins (`scheme://host[:port]`) allowed; empty: any loopback origin. */
  allowedOrigins: readonly string[];
  token?: string | undefined;
};

export type Refusal = { status: 401 | 403; message: string; headers?: Record<string, string> };

function originAllowed(origin: string, allowed: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (allowed.length > 0) return allowed.some((a) => a.replace(/\/$/, "").toLowerCase() === url.origin.toLowerCase());
  return (url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname);
}

const digest = (s: string): Buffer => createHash("sha256").update(s).digest();

/** Why the request is refused, or null when it may go on. */
export function refusal(headers: IncomingHttpHeaders, options: HttpGuardOptions): Refusal | null {
  const host = headers.host;
  if (!hostAllowed(host, options.allowedHosts)) {
    return { status: 403, message: `Host ${JSON.stringify(host ?? "")} is not allowed (allowed: ${options.allowedHosts.join(", ")}; --allowed-host adds one)` };
  }
  const origin = headers.origin;
  if (origin !== undefined && !originAllowed(origin, options.allowedOrigins)) {
    return { status: 403, message: `Origin ${JSON.stringify(origin)} is not allowed (--allowed-origin adds one)` };
  }
  if (options.token !== undefined) {
    const auth = headers.authorization ?? "";
    const given = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim() ?? "";
    // Compared as digests so the time taken says nothing about the token's length or prefix.
    if (!timingSafeEqual(digest(given), digest(options.token))) {
      return {
        status: 401,
        message: given === "" ? "a bearer token is required" : "the bearer token is not valid",
        headers: { "WWW-Authenticate": `Bearer realm="agent-registry"${given === "" ? "" : ', error="invalid_token"'}` },
      };
    }
  }
  return null;
}
