/**
 * Who owns which nats_subject, as the store says: one reserved key per subject,
 * `_registry.subjects.<subject>`, holding the agent type that claimed it. The key, not the
 * view, makes the subject unique: claims are written with create or compare-and-set, so of
 * two registrations racing for one subject exactly one can write it (docs/protocol.md
 * section 8). This file is the key layout, the record and the in-memory book of claims that
 * each replica keeps from the bucket's change log.
 */
import type { StoreEntry } from "../ports.js";
import { RESERVED_KEY_PREFIX } from "./records.js";

export const SUBJECT_CLAIM_PREFIX = `${RESERVED_KEY_PREFIX}subjects.`;

/** Subjects made of KV-safe tokens keep their own name in the key, which operators can read. */
const READABLE_SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * The claim key of a subject. A subject with other characters (NATS allows most of UTF-8)
 * is written as one token `=` + base64url of its UTF-8 bytes: `=` never occurs in the
 * readable form, so the two forms cannot collide, and the key stays within KV's alphabet.
 */
export function subjectClaimKey(subject: string): string {
  if (READABLE_SUBJECT.test(subject)) return SUBJECT_CLAIM_PREFIX + subject;
  let binary = "";
  for (const byte of new TextEncoder().encode(subject)) binary += String.fromCharCode(byte);
  return `${SUBJECT_CLAIM_PREFIX}=${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

export const isSubjectClaimKey = (key: string): boolean => key.startsWith(SUBJECT_CLAIM_PREFIX);

export type SubjectClaimRecord = {
  readonly kind: "subject_claim";
  readonly subject: string;
  readonly agent_type: string;
  /** The owner's tenant_scope when it claimed: a conflict names the owner only to its tenant. */
  readonly tenant_scope: string | null;
  readonly at: number;
};

export type StoredClaim = { readonly record: SubjectClaimRecord; readonly revision: number };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeClaim = (record: SubjectClaimRecord): Uint8Array => encoder.encode(JSON.stringify(record));

export function decodeClaim(bytes: Uint8Array): SubjectClaimRecord | null {
  try {
    const v = JSON.parse(decoder.decode(bytes)) as Record<string, unknown> | null;
    if (!v || v["kind"] !== "subject_claim" || typeof v["subject"] !== "string" || typeof v["agent_type"] !== "string") return null;
    const scope = v["tenant_scope"];
    return {
      kind: "subject_claim",
      subject: v["subject"],
      agent_type: v["agent_type"],
      tenant_scope: typeof scope === "string" ? scope : null,
      at: typeof v["at"] === "number" ? v["at"] : 0,
    };
  } catch {
    return null;
  }
}

/**
 * The claims this replica has seen, by key. The view applies entries to it in store order and
 * only once each (RegistryView.apply is idempotent by revision), so a later entry always wins.
 */
export class SubjectClaimBook {
  private readonly claims = new Map<string, StoredClaim>();
  /** Claim entries that did not decode. */
  undecodable = 0;

  get(key: string): StoredClaim | undefined {
    return this.claims.get(key);
  }

  forSubject(subject: string): StoredClaim | undefined {
    return this.claims.get(subjectClaimKey(subject));
  }

  entries(): IterableIterator<[string, StoredClaim]> {
    return this.claims.entries();
  }

  get size(): number {
    return this.claims.size;
  }

  apply(entry: StoreEntry): void {
    const record = entry.operation === "PUT" ? decodeClaim(entry.value) : null;
    if (record) this.claims.set(entry.key, { record, revision: entry.revision });
    else {
      if (entry.operation === "PUT") this.undecodable++;
      this.claims.delete(entry.key);
    }
  }

  clear(): void {
    this.claims.clear();
  }
}
