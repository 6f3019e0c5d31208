/**
 * Settings of the open discovery front, `agent-registry discovery` (docs/discovery.md): where
 * it listens, the public URL its links are built on, the publisher domain its URNs name, and
 * its bearer token. The NATS connection, prefix and request timeout are the CLI's common
 * options (src/cli/context.ts), as for the MCP front.
 */
import { z } from "zod";
import { int, list, logLevel, optionalString } from "./fields.js";
import { loadSettings, type Env, type GivenFlag } from "./load.js";

export const DISCOVERY_VARIABLES = [
  { key: "httpPort", env: "REGISTRY_DISCOVERY_HTTP_PORT", flag: "http-port", default: 8090, doc: "port of the discovery HTTP API (0 picks a free port)" },
  { key: "httpHost", env: "REGISTRY_DISCOVERY_HTTP_HOST", flag: "http-host", default: "127.0.0.1", doc: "address the discovery API binds to" },
  { key: "publicUrl", env: "REGISTRY_DISCOVERY_PUBLIC_URL", flag: "public-url", default: undefined, doc: "the URL clients reach the API at, which every link served is built on (unset: http://<host>:<port>)" },
  { key: "publisher", env: "REGISTRY_DISCOVERY_PUBLISHER", flag: "publisher", default: "localhost", doc: "publisher domain of the URNs served (urn:air:<publisher>:<namespace>:<agent_type>), and reversed the namespace of the MCP server names" },
  { key: "displayName", env: "REGISTRY_DISCOVERY_DISPLAY_NAME", flag: "display-name", default: "Agent Registry", doc: "the host's and the registry entry's displayName in the manifest" },
  { key: "token", env: "REGISTRY_DISCOVERY_TOKEN", flag: "http-token", default: undefined, doc: "bearer token every request must carry (never logged); unset: open" },
  { key: "referrals", env: "REGISTRY_DISCOVERY_REFERRALS", flag: "referral", default: undefined, doc: "upstream registries, comma-separated <urn>=<url> (the flag repeats): a search with federation referrals names them, one with auto (the default) asks them and merges their entries" },
  { key: "federationTimeoutMs", env: "REGISTRY_DISCOVERY_FEDERATION_TIMEOUT_MS", flag: "federation-timeout-ms", default: 2000, doc: "how long a federation auto search waits for each upstream registry; one that takes longer is left out" },
  { key: "federationMaxBytes", env: "REGISTRY_DISCOVERY_FEDERATION_MAX_BYTES", flag: "federation-max-bytes", default: 1_048_576, doc: "largest reply read from one upstream registry; a larger one is left out" },
  { key: "maxInFlight", env: "REGISTRY_DISCOVERY_MAX_IN_FLIGHT", flag: "max-in-flight", default: 64, doc: "requests answered at once; one more is refused with 429 RATE_LIMIT_EXCEEDED" },
  { key: "maxBodyBytes", env: "REGISTRY_DISCOVERY_MAX_BODY_BYTES", flag: "max-body-bytes", default: 65536, doc: "largest request body accepted (POST /search)" },
  { key: "maxManifestEntries", env: "REGISTRY_DISCOVERY_MAX_MANIFEST_ENTRIES", flag: "max-manifest-entries", default: 1000, doc: "agents the ai-catalog.json manifest lists at most; the rest are found through the registry entry's search and list" },
  { key: "logLevel", env: "LOG_LEVEL", flag: "log-level", default: "info", doc: "level of the JSON logs written to stderr" },
] as const;

/** A publisher is a domain name: the URN pattern of ai-catalog.schema.json allows `[a-zA-Z0-9.-]+`. */
const PUBLISHER_RE = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** ai-catalog.schema.json's identifier pattern, which a referral's identifier must match too. */
const URN_RE = /^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$/;

export type Referral = { identifier: string; url: string };

/** `<urn>=<url>`: split at the first `=` (a URN has none), the URL an http(s) one. */
const referral = z.string().transform((item, ctx): Referral => {
  const at = item.indexOf("=");
  const identifier = item.slice(0, at);
  const url = item.slice(at + 1);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (at < 0 || !URN_RE.test(identifier) || !parsed || !/^https?:$/.test(parsed.protocol)) {
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(item)} is not <urn:air:...>=<http(s) URL>` });
    return z.NEVER;
  }
  return { identifier, url };
});

export const discoveryConfigSchema = z.object({
  httpPort: int(0, 65535).default(8090),
  httpHost: z.string().min(1).default("127.0.0.1"),
  publicUrl: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  publisher: z.string().regex(PUBLISHER_RE, "a lower-case domain name").max(253).default("localhost"),
  displayName: z.string().min(1).max(200).default("Agent Registry"),
  token: optionalString,
  referrals: list.pipe(z.array(referral).max(32)).optional(),
  federationTimeoutMs: int(100, 30_000).default(2000),
  federationMaxBytes: int(1024, 16_777_216).default(1_048_576),
  maxInFlight: int(1, 10_000).default(64),
  maxBodyBytes: int(1024, 1_048_576).default(65536),
  maxManifestEntries: int(1, 100_000).default(1000),
  logLevel,
});

export type DiscoveryConfig = Readonly<z.output<typeof discoveryConfigSchema>>;

/** Flags win over the environment; an empty variable counts as unset. */
export function loadDiscoveryConfig(flags: Readonly<Record<string, GivenFlag>>, env: Env, overrides?: Record<string, unknown>): DiscoveryConfig {
  return loadSettings(DISCOVERY_VARIABLES, discoveryConfigSchema, { env, flags, ...(overrides ? { overrides } : {}) });
}
