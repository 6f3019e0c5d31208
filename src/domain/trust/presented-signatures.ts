/**
 * What a register body presents for verification (docs/protocol.md section 8, v1.2): the
 * signed document, in its RFC 8785 (JCS) canonical form, and the JWS signatures over it.
 *
 * - A spec (`spec`) is signed by a detached JWS beside it, `signature`, over the JCS form of
 *   the `spec` member exactly as sent.
 * - An A2A card is signed as A2A section 8.4 says: each entry of its own `signatures` is a
 *   JWS over the JCS form of the card without `signatures`.
 * - An MCP tool spec is signed by a detached JWS beside it, `signature`, over the JCS form of
 *   an object of the agent type (the subject's: a tools/list result names none), `mcp_toolspec`
 *   and those of the fields beside it that complete the spec, exactly as sent: so a signed tool
 *   spec can be registered under no other agent type, subject or owner than the one signed.
 * - An MCP server.json is signed the same way: the object covers `agent_type`, `mcp_server`,
 *   and `mcp_toolspec` and the fields beside it when the body carries them.
 *
 * Every signature is held to small bounds before anything else looks at it (no walk of a huge
 * array, no nested values), and the document is canonicalized only once they hold.
 */
import canonicalize from "canonicalize";
import { TOOLSPEC_FIELDS } from "../interop/register-body.js";
import { isPlainObject } from "../spec/spec.js";
import { trustRefusal } from "./trust-refusal.js";

/** A card signed by its provider and a few endorsers at most; more is refused unread. */
export const MAX_SIGNATURES = 4;
const MAX_PROTECTED_CHARS = 4096;
const MAX_SIGNATURE_CHARS = 2048;
const MAX_HEADER_MEMBERS = 16;
const MAX_HEADER_VALUE_CHARS = 1024;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** One flattened JWS with its payload detached (RFC 7515 appendix F), as A2A's AgentCardSignature. */
export type PresentedSignature = {
  readonly protected: string;
  readonly signature: string;
  readonly header?: Readonly<Record<string, string | number | boolean>>;
  /** Where it sits in the register body, for the error's issue. */
  readonly path: string;
};

export type SignedDocument = {
  readonly source: "spec" | "a2a_card" | "mcp_toolspec" | "mcp_server";
  /** The JCS canonical form of what the signatures cover, for the agent type registered (a tool spec's covers it). */
  readonly canonical: (agentType: string) => string;
  /** Empty: the document came unsigned. */
  readonly signatures: readonly PresentedSignature[];
};

/**
 * The signed document of a register body, or null for a body with no document a signature can
 * cover. Throws `invalid_request` for signatures out of bounds
 * or of the wrong shape, and for a `signature` where this version takes none.
 */
export function presentedSignatures(body: Readonly<Record<string, unknown>>): SignedDocument | null {
  if (body["a2a_card"] !== undefined) {
    if (body["signature"] !== undefined) {
      throw trustRefusal("signature_not_supported", "signature", "a card is signed inside itself, in a2a_card.signatures (A2A section 8.4)");
    }
    const card = body["a2a_card"];
    if (!isPlainObject(card)) return null;
    const listed = card["signatures"];
    const signatures = listed === undefined ? [] : signatureList(listed, "a2a_card.signatures");
    const { signatures: _left, ...unsigned } = card;
    const canonical = canonicalForm(unsigned, "a2a_card");
    return { source: "a2a_card", canonical: () => canonical, signatures };
  }
  if (body["spec"] !== undefined) {
    const canonical = canonicalForm(body["spec"], "spec");
    return { source: "spec", canonical: () => canonical, signatures: detached(body) };
  }
  if (body["mcp_server"] !== undefined || body["mcp_toolspec"] !== undefined) {
    const source = body["mcp_server"] !== undefined ? "mcp_server" : "mcp_toolspec";
    const covered: Record<string, unknown> = {};
    for (const field of ["mcp_server", "mcp_toolspec", ...TOOLSPEC_FIELDS]) if (body[field] !== undefined) covered[field] = body[field];
    return { source, canonical: (agentType) => canonicalForm({ ...covered, agent_type: agentType }, source), signatures: detached(body) };
  }
  if (body["signature"] !== undefined) {
    throw trustRefusal("signature_not_supported", "signature", "a signature goes beside a spec, a tool spec or a server.json, or inside an A2A card");
  }
  return null;
}

/** The one detached JWS beside a spec or a tool spec, if any. */
function detached(body: Readonly<Record<string, unknown>>): PresentedSignature[] {
  const one = body["signature"];
  return one === undefined ? [] : [signatureOf(one, "signature")];
}

function signatureList(listed: unknown, path: string): PresentedSignature[] {
  if (!Array.isArray(listed)) throw trustRefusal("malformed_signature", path, "expected an array of JWS signatures");
  // Counted before a single entry is read: a huge array costs its length check only.
  if (listed.length > MAX_SIGNATURES) throw trustRefusal("too_many_signatures", path, `${listed.length} signatures; at most ${MAX_SIGNATURES}`);
  return listed.map((s, i) => signatureOf(s, `${path}.${i}`));
}

function signatureOf(value: unknown, path: string): PresentedSignature {
  if (!isPlainObject(value)) throw trustRefusal("malformed_signature", path, "expected an object with protected and signature");
  const extra = Object.keys(value).filter((k) => k !== "protected" && k !== "signature" && k !== "header");
  if (extra.length > 0) throw trustRefusal("malformed_signature", `${path}.${extra[0]}`, "not a member of a JWS signature (protected, signature, header)");
  const prot = value["protected"];
  const sig = value["signature"];
  if (typeof prot !== "string" || prot.length === 0 || prot.length > MAX_PROTECTED_CHARS || !BASE64URL.test(prot)) {
    throw trustRefusal("malformed_signature", `${path}.protected`, `expected base64url text of at most ${MAX_PROTECTED_CHARS} characters`);
  }
  if (typeof sig !== "string" || sig.length === 0 || sig.length > MAX_SIGNATURE_CHARS || !BASE64URL.test(sig)) {
    throw trustRefusal("malformed_signature", `${path}.signature`, `expected base64url text of at most ${MAX_SIGNATURE_CHARS} characters`);
  }
  const header = value["header"];
  if (header === undefined) return { protected: prot, signature: sig, path };
  return { protected: prot, signature: sig, header: flatHeader(header, `${path}.header`), path };
}

/** The unprotected header: a few flat members (nothing nested), as no JWS needs more. */
function flatHeader(header: unknown, path: string): Record<string, string | number | boolean> {
  if (!isPlainObject(header)) throw trustRefusal("malformed_signature", path, "expected an object");
  const entries = Object.entries(header);
  if (entries.length > MAX_HEADER_MEMBERS) throw trustRefusal("malformed_signature", path, `at most ${MAX_HEADER_MEMBERS} members`);
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of entries) {
    const flat = typeof v === "number" || typeof v === "boolean" || (typeof v === "string" && v.length <= MAX_HEADER_VALUE_CHARS);
    if (!flat) throw trustRefusal("malformed_signature", `${path}.${k}`, `expected a string of at most ${MAX_HEADER_VALUE_CHARS} characters, a number or a boolean`);
    out[k] = v;
  }
  return out;
}

function canonicalForm(document: unknown, path: string): string {
  const text = canonicalize(document);
  // Parsed JSON always has a canonical form; undefined would mean a body that was not JSON.
  if (text === undefined) throw trustRefusal("malformed_signature", path, "the signed document has no JSON canonical form");
  return text;
}
