/**
 * A version written by another ecosystem as an AgentSpec version. Cards (PROTOCOL.md section
 * 10.1) and MCP servers (section 10.2) let the provider choose the format; the registry needs
 * semver X.Y.Z[-prerelease]. Short forms that say a version plainly are completed, and the
 * import warns: `1.0` -> `1.0.0`, `v2` -> `2.0.0`, `V1.2.3-rc.1` -> `1.2.3-rc.1`,
 * `1.2.3+build.7` -> `1.2.3` (build metadata is not part of a spec version). Anything else
 * (`latest`, `2024-05-01`) is not a version the registry can use. One rule for both imports:
 * the same server version must become the same spec version whichever document carried it.
 */
import { specVersion } from "./spec.js";

/** A prerelease must start with a letter here (`1.0-beta`), so a date such as `2024-05-01` is not read as 2024.0.0-05-01. */
const SHORT_FORM = /^[vV]?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[A-Za-z][0-9A-Za-z.-]*)?(?:\+[0-9A-Za-z.-]+)?$/;

/** The spec version for a foreign version string, and whether it had to be completed; null when there is none. */
export function completeVersion(raw: string): { version: string; completed: boolean } | null {
  if (specVersion.safeParse(raw).success) return { version: raw, completed: false };
  const match = SHORT_FORM.exec(raw.trim());
  if (!match) return null;
  const [, major, minor = "0", patch = "0", prerelease = ""] = match;
  // Number() drops leading zeros (`01` is not semver); a number past 2^53 fails the check below.
  const version = `${Number(major)}.${Number(minor)}.${Number(patch)}${prerelease}`;
  return specVersion.safeParse(version).success ? { version, completed: true } : null;
}
