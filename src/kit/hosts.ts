/**
 * Host names as the servers and fronts meet them: which are this machine's loopback, what a
 * `Host` header or a `host:port` names, and which names an HTTP server answers to. One module,
 * so the NATS connection's "is this server on this machine?" (the no-credentials warning), the
 * MCP front's guard and the ops port's Host allowlist cannot disagree on what loopback is.
 *
 * The allowlists defend against DNS rebinding: a web page whose own name the attacker makes
 * resolve to this machine can have a browser send it requests, but the `Host` header then
 * names the attacker's host. A `Host` that is an address (not a name) cannot come from a
 * rebinding, which is why a server bound to every interface may answer to its own addresses
 * (probes and scrapers that reach a pod by its IP) without opening that door.
 */
import { networkInterfaces } from "node:os";

/** The names every allowlist holds: this machine, however a local client writes it. */
export const LOOPBACK_NAMES: readonly string[] = ["localhost", "127.0.0.1", "[::1]"];

const WILDCARD_BINDS = new Set(["0.0.0.0", "::", "[::]", ""]);
const OCTET = "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
/** 127.0.0.0/8, written whole: `127.0.0.1.evil.com` is any host its owner points it at. */
const LOOPBACK_V4_RE = new RegExp(`^127(\\.${OCTET}){3}$`);
/** IPv4-mapped 127.x.y.z, as written or as URL normalises it (`::ffff:7f00:1`). */
const MAPPED_LOOPBACK_RE = new RegExp(`^::ffff:(127(\\.${OCTET}){3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$`);

/** A server bound to every interface (0.0.0.0, ::) rather than to one address. */
export const isWildcardBind = (bindHost: string): boolean => WILDCARD_BINDS.has(bindHost.trim());

/** IPv6 addresses in brackets (as in a URL or a Host header), everything lower case. */
export const bracketed = (host: string): string => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host).toLowerCase();

/**
 * The host name of an authority: `Example.com:8080` -> `example.com`, `[::1]:80` -> `[::1]`,
 * `10.0.0.5` -> `10.0.0.5`. For a Host header and for nats.js's `getServer()` alike.
 */
export function hostName(authority: string): string {
  const h = authority.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1);
  const colon = h.indexOf(":");
  return colon < 0 ? h : h.slice(0, colon);
}

/**
 * True for a host only this machine can reach: `localhost` and names under `.localhost`
 * (RFC 6761 reserves them for loopback, and browsers resolve them so without asking DNS), an
 * IPv4 address of 127.0.0.0/8 written whole, `::1` and IPv4-mapped loopback, bracketed or not.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  const bare = h.startsWith("[") && h.endsWith("]") ? h.slice(1, -1) : h;
  return bare === "localhost" || (bare.endsWith(".localhost") && bare.length > ".localhost".length) || LOOPBACK_V4_RE.test(bare) || bare === "::1" || MAPPED_LOOPBACK_RE.test(bare);
}

/** Whether a `host:port` (a Host header, nats.js's `getServer()`) names this machine's loopback. */
export const isLoopbackAuthority = (authority: string): boolean => isLoopbackHost(hostName(authority));

/**
 * The host names a server bound to `bindHost` answers to: the loopback names; the bind
 * address, or for a wildcard bind `ownAddresses` (the machine's interface addresses, when the
 * caller wants them allowed); and the names the operator added. Deduplicated, IPv6 bracketed.
 */
export function allowedHostsFor(bindHost: string, extra: readonly string[], ownAddresses: readonly string[] = []): string[] {
  const bound = isWildcardBind(bindHost) ? ownAddresses : [bindHost.trim()];
  return [...new Set([...LOOPBACK_NAMES, ...bound, ...extra.map((e) => e.trim()).filter((e) => e !== "")].map(bracketed))];
}

/** Whether a request's `Host` header names one of `allowed` (any port); a request with none is not. */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly string[]): boolean {
  return hostHeader !== undefined && allowed.includes(hostName(hostHeader));
}

/** The addresses of this machine's network interfaces (a pod's IP among them), read once at a server's start. */
export function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** Names a host list may hold at most: every input is bounded. */
export const MAX_ALLOWED_HOSTS = 64;
const DNS_NAME_RE = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;
const IPV6_RE = /^\[?[0-9a-f:.]{2,45}\]?$/;

/** What is wrong with a list of host names (no ports, no wildcards), or null when nothing is. */
export function hostListProblem(names: readonly string[]): string | null {
  if (names.length > MAX_ALLOWED_HOSTS) return `at most ${MAX_ALLOWED_HOSTS} host names`;
  for (const name of names) {
    const n = name.trim().toLowerCase();
    if (!DNS_NAME_RE.test(n) && !(n.includes(":") && IPV6_RE.test(n))) {
      return `${JSON.stringify(name.slice(0, 64))} is not a host name or address (no scheme, port, path or wildcard: a Host header's name, e.g. registry.example.com, 10.0.0.5, [fd00::5])`;
    }
  }
  return null;
}
