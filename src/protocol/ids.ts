/**
 * The tokens that appear inside subjects (PROTOCOL.md section 1). A subject token is an
 * identity: the service refuses a request whose tokens break these rules, and the SDK and the
 * CLI check them before sending so a typo fails locally with the same words.
 */

export const AGENT_TYPE_RE = /^[a-z0-9]([a-z0-9_-]{0,126}[a-z0-9])?$/;
export const INSTANCE_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;
export const TENANT_RE = /^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$/;
/** A versioned schema's name (PROTOCOL.md section 11.1): the agent_type rule with capitals allowed. */
export const SCHEMA_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/**
 * A schema version in a ref or a key: exact semver `X.Y.Z` with an optional prerelease, no
 * build metadata (`+` cannot be part of a KV key, and semver ignores it in comparisons anyway).
 */
export const SCHEMA_VERSION_RE = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
/** `{"$ref": "#<Name>:<Version>"}` names a stored schema inside any capability schema. */
export const SCHEMA_REF_RE = /^#([A-Za-z0-9][A-Za-z0-9_-]{0,127}):(.{1,256})$/;
/**
 * Dot-separated tokens of `[A-Za-z0-9_-]`, case preserved; at most {@link CAPABILITY_MAX_LENGTH}
 * characters. v1 allowed lower case only; v1.1 (PROTOCOL.md section 10.2) widened it so MCP tool
 * names such as `get_Weather` fit unchanged. Every token is still a valid NATS subject token.
 */
export const CAPABILITY_RE = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
export const CAPABILITY_MAX_LENGTH = 256;
/**
 * A NATS subject a client may publish to: dot-separated tokens, no wildcards, no whitespace,
 * and no control characters (C0, DEL, C1). NUL, CR or LF in a subject break the NATS protocol
 * line of whoever publishes to it, and routing hands this subject to every coordinator.
 */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const NATS_SUBJECT_RE = /^[^\s.*>\u0000-\u001f\u007f-\u009f]+(\.[^\s.*>\u0000-\u001f\u007f-\u009f]+)*$/;
/** A NATS queue group name: one token, with the same characters as a subject token. */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const QUEUE_GROUP_RE = /^[^\s.*>\u0000-\u001f\u007f-\u009f]+$/;
/**
 * Characters a name shown to people may not hold: control characters (C0, DEL, C1), the line
 * and paragraph separators, and the invisible characters that reorder or hide text (the bidi
 * marks, embeddings, overrides and isolates, the Arabic letter mark, zero-width spaces and
 * joiners, the word joiner and invisible operators, the byte order mark). Such names are
 * printed in the CLI's tables and trees, in logs, in warnings and on the web page, where
 * U+202E RIGHT-TO-LEFT OVERRIDE makes a name read as another and a zero-width space makes two
 * names look alike.
 */
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
export const UNSAFE_NAME_CHAR_RE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** The first character of `name` that UNSAFE_NAME_CHAR_RE refuses, as `U+202E at 3`, or null. */
export function unsafeNameChar(name: string): string | null {
  const m = UNSAFE_NAME_CHAR_RE.exec(name);
  return m ? `U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")} at ${m.index}` : null;
}

/**
 * Subjects an agent may not take as its nats_subject: a first token starting with `$` belongs
 * to NATS itself (`$JS.`, `$KV.`, `$SYS.`, `$SRV.`, ...) and one starting with `_INBOX` to
 * clients' reply inboxes (`_INBOX.`, and the private `_INBOX_<name>.` of docs/security.md):
 * a coordinator sending tasks there would drive JetStream or answer someone else's request.
 * The registry's own prefix is configurable, so the service checks it where the prefix is known.
 */
export const RESERVED_SUBJECT_RE = /^(\$|_INBOX(\.|_|$))/;
