/**
 * What a stored spec keeps of the signatures it was registered with (v1.2), so that it can be
 * verified again when its tenant's trust roots change (trust-rejudge.ts): the JCS canonical
 * form of the signed document exactly as verified, and the JWS signatures over it. The
 * canonical form is kept rather than rebuilt because the stored spec is not what was signed
 * (defaults filled, the subject's tenant bound in, a card or tool spec imported). Specs
 * stored before this was kept have none, and are judged by their key id and grant only.
 */
import type { PresentedSignature, SignedDocument } from "./presented-signatures.js";

export type KeptSignature = { readonly protected: string; readonly signature: string; readonly header?: Readonly<Record<string, string | number | boolean>> };

export type SignedEvidence = {
  readonly source: SignedDocument["source"];
  /** The JCS canonical text the signatures cover. */
  readonly payload: string;
  readonly signatures: readonly KeptSignature[];
};

/** The evidence of a signed document as registered for `agentType`; undefined when it carries no signature. */
export function evidenceOf(doc: SignedDocument | null, agentType: string): SignedEvidence | undefined {
  if (doc === null || doc.signatures.length === 0) return undefined;
  const signatures = doc.signatures.map((s): KeptSignature => (s.header === undefined ? { protected: s.protected, signature: s.signature } : { protected: s.protected, signature: s.signature, header: s.header }));
  return { source: doc.source, payload: doc.canonical(agentType), signatures };
}

/** The document kept evidence stands for, as verify-signatures.ts checks it. */
export function documentOf(e: SignedEvidence): SignedDocument {
  const path = e.source === "a2a_card" ? "a2a_card.signatures" : "signature";
  const signatures = e.signatures.map((s, i): PresentedSignature => ({ ...s, path: e.source === "a2a_card" ? `${path}.${i}` : path }));
  return { source: e.source, canonical: () => e.payload, signatures };
}
