/**
 * Which A2A version an Agent Card is written for (PROTOCOL.md section 10.1), decided the way the
 * official A2A JS SDK decides it, so a card the SDK reads as v0.3 is read as v0.3 here too.
 *
 * What the SDK does (a2aproject/a2a-js, `isLegacyAgentCard` in
 * src/compat/v0_3/client/card-resolver.ts and `isLegacyVersion` in src/version_utils.ts, the
 * same at tag v1.0.1 and at main f844dad4), in order:
 *   1. a `supportedInterfaces` that is a non-empty array: v1.0 (a "hybrid" card carrying v0.3
 *      fields as well is read as v1.0);
 *   2. a string `url` while the card has no `supportedInterfaces` key at all: v0.3;
 *   3. any of the keys `preferredTransport`, `additionalInterfaces`,
 *      `supportsAuthenticatedExtendedCard` present (whatever their value): v0.3;
 *   4. a string `protocolVersion` in [0.3, 1.0): v0.3. Only the leading major and minor numbers
 *      count (`0.3.0`, `0.3`, `0.9.9`); a missing minor is 0; an empty or blank string counts as
 *      legacy; a string whose major or minor does not start with digits (`v0.3`) does not;
 *   5. otherwise v1.0.
 */
import { isPlainObject } from "../../spec/spec.js";

export const A2A_VERSIONS = ["1.0", "0.3"] as const;
export type A2aVersion = (typeof A2A_VERSIONS)[number];

/** Keys that only v0.3 cards have; the SDK tests their presence, not their value. */
const V0_3_ONLY_KEYS = ["preferredTransport", "additionalInterfaces", "supportsAuthenticatedExtendedCard"] as const;

export function detectA2aVersion(card: unknown): A2aVersion {
  if (!isPlainObject(card)) return "1.0";
  const interfaces = card["supportedInterfaces"];
  if (Array.isArray(interfaces) && interfaces.length > 0) return "1.0";
  if (typeof card["url"] === "string" && !Object.hasOwn(card, "supportedInterfaces")) return "0.3";
  if (V0_3_ONLY_KEYS.some((key) => Object.hasOwn(card, key))) return "0.3";
  const protocolVersion = card["protocolVersion"];
  if (typeof protocolVersion === "string" && isLegacyProtocolVersion(protocolVersion)) return "0.3";
  return "1.0";
}

/**
 * True for a protocol version in [0.3, 1.0), compared on (major, minor) as the SDK does. Blank
 * means "no version", which A2A reads as v0.3.
 */
export function isLegacyProtocolVersion(version: string): boolean {
  const trimmed = version.trim();
  if (trimmed === "") return true;
  const [majorText = "", minorText] = trimmed.split(".");
  const major = leadingInteger(majorText);
  const minor = minorText === undefined ? 0 : leadingInteger(minorText);
  if (major === null || minor === null) return false;
  return major === 0 && minor >= 3;
}

/** The major number of a protocol version (`1` for `1.0`), read as the SDK reads it; null when it has none. */
export function protocolMajor(version: string): number | null {
  return leadingInteger(version.trim().split(".")[0] ?? "");
}

/**
 * The integer a segment starts with (`3` for `3rc1`), or null when it starts with no digits or
 * is negative: the SDK reads segments with Number.parseInt and refuses negative numbers (`-0`
 * is 0 for parseInt, and so here).
 */
function leadingInteger(segment: string): number | null {
  const match = /^\s*([+-]?)(\d+)/.exec(segment);
  if (!match) return null;
  const value = Number(match[2]);
  return match[1] === "-" && value !== 0 ? null : value;
}
