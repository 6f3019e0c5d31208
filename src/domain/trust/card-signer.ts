/**
 * The registry's own signature on the A2A cards it exports (docs/trust.md), when the operator
 * gives it a signing key (REGISTRY_CARD_SIGNING_KEY): each exported card carries one entry in
 * `signatures`, a JWS over the RFC 8785 (JCS) form of the card without `signatures`, its
 * payload detached, as A2A section 8.4 defines and as the registry itself verifies cards. A
 * coordinator fetching a card over HTTP checks it with the key the ops port publishes at
 * /.well-known/jwks.json (or one the operator hands out), never with a key the card names.
 */
import canonicalize from "canonicalize";
import { FlattenedSign, importJWK, type JWK } from "jose";

const ALGORITHMS = ["ES256", "EdDSA"] as const;
export type CardSigningAlg = (typeof ALGORITHMS)[number];
/** JWK members of a private key; what is left is the public key. */
const PRIVATE_MEMBERS = new Set(["d", "p", "q", "dp", "dq", "qi", "k", "oth"]);

export class CardSigningKeyError extends Error {}

export class CardSigner {
  private constructor(
    private readonly key: Awaited<ReturnType<typeof importJWK>>,
    readonly kid: string,
    readonly alg: CardSigningAlg,
    readonly publicJwk: JWK,
  ) {}

  /** From a private JWK naming its `kid` and `alg` (ES256 on P-256, or EdDSA on Ed25519). */
  static async fromJwk(jwk: unknown): Promise<CardSigner> {
    if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw new CardSigningKeyError("expected a JSON object, a private JWK");
    const k = jwk as Record<string, unknown>;
    const { kid, alg, d } = k;
    if (typeof kid !== "string" || kid.length === 0 || kid.length > 256) throw new CardSigningKeyError("the JWK needs a kid (1 to 256 characters): coordinators pick the key by it");
    if (!ALGORITHMS.includes(alg as CardSigningAlg)) throw new CardSigningKeyError(`the JWK's alg must be one of ${ALGORITHMS.join(", ")}`);
    if (typeof d !== "string") throw new CardSigningKeyError("the JWK is not a private key (no d)");
    let key: Awaited<ReturnType<typeof importJWK>>;
    try {
      key = await importJWK(k as JWK, alg as string);
    } catch (e) {
      throw new CardSigningKeyError(`the JWK is not a ${String(alg)} key: ${(e as Error).message}`);
    }
    const publicJwk = Object.fromEntries(Object.entries(k).filter(([member]) => !PRIVATE_MEMBERS.has(member))) as JWK;
    return new CardSigner(key, kid, alg as CardSigningAlg, { ...publicJwk, use: "sig" });
  }

  /** The card with the registry's signature as its only entry of `signatures`. */
  async sign(card: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const { signatures: _dropped, ...unsigned } = card;
    const canonical = canonicalize(unsigned);
    if (canonical === undefined) throw new Error("an exported card has no JSON canonical form");
    const jws = await new FlattenedSign(new TextEncoder().encode(canonical)).setProtectedHeader({ alg: this.alg, kid: this.kid }).sign(this.key);
    return { ...unsigned, signatures: [{ protected: jws.protected, signature: jws.signature }] };
  }

  /** The public key as a JWK Set, for /.well-known/jwks.json. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.publicJwk] };
  }
}
