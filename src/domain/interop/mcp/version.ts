/**
 * A spec version must be semver `X.Y.Z[-prerelease]` (PROTOCOL.md section 3), but server
 * versions are often written `1.0`, `2` or `v1.2.3`. As for A2A cards (section 10.1), such a
 * version is completed to `1.0.0` and the reply says so; anything else is left for the spec's
 * own check to refuse, so the message names the rule.
 */
const SHORT_VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/;

export type CoercedVersion = { version: unknown; warning?: string };

export function coerceVersion(version: unknown, path = "version"): CoercedVersion {
  if (typeof version !== "string") return { version };
  const m = SHORT_VERSION.exec(version);
  if (!m) return { version };
  const coerced = `${Number(m[1])}.${Number(m[2] ?? 0)}.${Number(m[3] ?? 0)}`;
  if (coerced === version) return { version };
  return { version: coerced, warning: `${path}: "${version}" is not semver X.Y.Z; registered as "${coerced}"` };
}
