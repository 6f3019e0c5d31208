/**
 * Fetches a JWK set from an https URL the operator named in the trust file (docs/trust.md,
 * "Keys from a JWKS URL"), never one a signed document names. Bounded: https only, no
 * credentials in the URL, no redirect followed, every address the host name resolves to must
 * be public (checked in the connection's own lookup, so the address connected to is the one
 * checked and a DNS answer that changes between check and connect cannot slip a private one
 * in), a size limit, and one deadline for the whole exchange. Node's https; no new dependency.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request } from "node:https";
import { isIP } from "node:net";
import { isPublicAddress } from "./public-address.js";

export type JwksFetchOptions = {
  /** Bytes the response may have; more is refused. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  /** Test only (REGISTRY_TRUST_JWKS_ALLOW_PRIVATE): lets a URL reach loopback and private addresses. */
  readonly allowPrivate?: boolean;
  /** Extra CA certificates (PEM) to trust beside the system's, for a private CA. */
  readonly ca?: string;
};

export class JwksFetchError extends Error {
  constructor(url: string, problem: string) {
    super(`JWKS URL ${url}: ${problem}`);
    this.name = "JwksFetchError";
  }
}

/** Checks a URL before anything is fetched: https, no credentials, a host. */
export function checkJwksUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new JwksFetchError(raw, "not a URL");
  }
  if (url.protocol !== "https:") throw new JwksFetchError(raw, "only https URLs are fetched");
  if (url.username !== "" || url.password !== "") throw new JwksFetchError(raw, "credentials in the URL are not accepted");
  return url;
}

export function fetchJwks(raw: string, opts: JwksFetchOptions): Promise<unknown> {
  let url: URL;
  try {
    url = checkJwksUrl(raw);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0 && !opts.allowPrivate && !isPublicAddress(host)) {
    return Promise.reject(new JwksFetchError(raw, `${host} is not a public address`));
  }
  return new Promise((resolve, reject) => {
    const fail = (problem: string): void => {
      req.destroy();
      reject(new JwksFetchError(raw, problem));
    };
    const req = request(
      url,
      {
        method: "GET",
        headers: { accept: "application/jwk-set+json, application/json" },
        lookup: (hostname, options, callback) => checkedLookup(hostname, options.all === true, opts.allowPrivate === true, callback as LookupCallback),
        ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
        // One deadline for the whole exchange, below; no keep-alive pool to outlive it.
        agent: false,
      },
      (res) => {
        if (res.statusCode !== 200) return fail(`answered ${res.statusCode ?? "no status"} (redirects are not followed)`);
        const declared = Number(res.headers["content-length"] ?? 0);
        if (declared > opts.maxBytes) return fail(`answered ${declared} bytes; at most ${opts.maxBytes}`);
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes) return fail(`answered more than ${opts.maxBytes} bytes`);
          chunks.push(chunk);
        });
        res.on("end", () => {
          clearTimeout(deadline);
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown);
          } catch (e) {
            reject(new JwksFetchError(raw, `not JSON: ${(e as Error).message}`));
          }
        });
        res.on("error", (e) => fail(e.message));
      },
    );
    const deadline = setTimeout(() => fail(`no complete answer within ${opts.timeoutMs} ms`), opts.timeoutMs);
    deadline.unref();
    req.on("error", (e) => {
      clearTimeout(deadline);
      reject(e instanceof JwksFetchError ? e : new JwksFetchError(raw, e.message));
    });
    req.end();
  });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Resolves every address of the host and refuses them all if any is not public. */
function checkedLookup(hostname: string, all: boolean, allowPrivate: boolean, callback: LookupCallback): void {
  dnsLookup(hostname, { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
    if (refused !== undefined || addresses.length === 0) {
      const e: NodeJS.ErrnoException = new JwksFetchError(hostname, refused ? `resolves to ${refused.address}, not a public address` : "resolves to no address");
      return callback(e, []);
    }
    // The connection asks for every address (happy eyeballs) or for one.
    if (all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
