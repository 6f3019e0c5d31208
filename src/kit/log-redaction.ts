/**
 * What a log line must never show. Fields named for a secret are censored by pino wherever a
 * logger of the project writes them (LOG_REDACT_PATHS). A URL or request path is logged only through redactUrl:
 * a query string can carry a credential (the web page's EventSource cannot send a header, so
 * its token comes as ?token=), and a URL's user info a password. Every HTTP server of the
 * project (the ops server with /ui, the MCP front, the audit mirror's ops server) logs through it.
 */

/**
 * The fields pino censors (as "[Redacted]") in every logger of the project: the registry's,
 * the MCP front's and the audit mirror's, and the tests' capture. A backstop: a line that
 * says whether a secret is set names the field otherwise (`auth: "token"` or `"off"`), since a
 * field called `token` would read "[Redacted]" whatever it holds.
 */
export const LOG_REDACT_PATHS: readonly string[] = ["password", "token", "*.password", "*.token"];

/** What a secret is replaced with, as in the configuration logged at start (redactedConfig). */
export const REDACTED = "[redacted]";

/** Parameter names (lower case, without `-`, `_` and `.`) that carry a credential... */
const SECRET_NAMES = new Set(["auth", "authorization", "jwt", "sig", "pwd", "pass", "passwd", "credential", "credentials", "apikey"]);
/** ...and the endings that make one: `access_token`, `client_secret`, `api-key`, `sessionToken`. */
const SECRET_ENDINGS = ["token", "password", "passwd", "secret", "key", "signature"];

/** True when a query parameter of this name is a credential whose value no log may show. */
export function isSecretParam(rawName: string): boolean {
  let name = rawName;
  try {
    // As the servers read it (URLSearchParams): `%74oken` is `token`.
    name = decodeURIComponent(rawName.replace(/\+/g, " "));
  } catch {
    // not valid percent-encoding: judged as written
  }
  const bare = name
    .replace(/\[\]$/, "")
    .toLowerCase()
    .replace(/[-_.\s]/g, "");
  return SECRET_NAMES.has(bare) || SECRET_ENDINGS.some((e) => bare.endsWith(e));
}

/**
 * A request path (`req.url`) or an absolute URL as it may be logged: the value of every
 * credential parameter of the query string (and of a fragment written as one) replaced, and
 * an absolute URL's password too, or its whole user info when it has no password (NATS takes
 * a token there). Everything else is kept as written, so the line still says which request it was.
 */
export function redactUrl(url: string): string {
  const hash = url.indexOf("#");
  const beforeHash = hash < 0 ? url : url.slice(0, hash);
  const question = beforeHash.indexOf("?");
  const head = question < 0 ? beforeHash : beforeHash.slice(0, question);
  let out = redactUserInfo(head);
  if (question >= 0) out += `?${redactParams(beforeHash.slice(question + 1))}`;
  if (hash >= 0) out += `#${redactParams(url.slice(hash + 1))}`;
  return out;
}

/** A comma-separated list of URLs (NATS_URL's form), each through redactUrl. */
export function redactUrls(list: string): string {
  return list
    .split(",")
    .map((u) => redactUrl(u))
    .join(",");
}

function redactParams(query: string): string {
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0 || !isSecretParam(pair.slice(0, eq))) return pair;
      return `${pair.slice(0, eq)}=${REDACTED}`;
    })
    .join("&");
}

/** `scheme://user:password@host/...`: the user info ends at the authority's last `@`. */
function redactUserInfo(head: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(head);
  if (!scheme) return head;
  const start = scheme[0].length;
  const slash = head.indexOf("/", start);
  const authority = slash < 0 ? head.slice(start) : head.slice(start, slash);
  const at = authority.lastIndexOf("@");
  if (at < 0) return head;
  const userInfo = authority.slice(0, at);
  const colon = userInfo.indexOf(":");
  const shown = colon < 0 ? REDACTED : `${userInfo.slice(0, colon)}:${REDACTED}`;
  return `${head.slice(0, start)}${shown}${head.slice(start + at)}`;
}
