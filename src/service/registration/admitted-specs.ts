/**
 * Which register body each agent type's stored spec was admitted from (its spec, card or tool
 * spec and the fields that complete them), so that a replica of the type registering with the
 * same body again is not imported and validated again. Every replica of a type sends the
 * same spec, and each registration used to pay for the whole validation (the zod shape,
 * the named-ref resolution, the schema walks and the comparison with the stored spec): a
 * quarter of the registry's CPU in the registration benchmark, and a card's import on top.
 *
 * Per agent type, one digest of the body's text less the instance's own fields (SHA-256: a
 * body that collides with another would be admitted unchecked, so the hash must be one nobody
 * can aim at), the revision of the spec record that holds the spec admitted from it, the
 * generation of named schemas it was validated under, its warnings and a card's A2A version.
 * A hit hands back the view's own spec object, so nothing is held twice and the comparison
 * with the stored spec is an identity. It holds only while the view's spec record is that
 * very revision and its named schemas are that generation (named schemas are immutable, but
 * one may be deleted by hand). Refusals are not kept: each is judged again, so its message
 * tells the current truth.
 */
import { createHash } from "node:crypto";
import type { AgentSpec } from "../../domain/spec/spec.js";
import type { A2aVersion } from "../../domain/interop/a2a/index.js";

/** A register body's spec once imported and validated: what a repeat of the body answers with. */
export type AdmittedSpec = {
  readonly spec: AgentSpec;
  /** The import's warnings (a card's, a tool spec's), then the validation's. */
  readonly warnings: string[];
  /** The A2A version a card was read as. */
  readonly a2aVersion?: A2aVersion | undefined;
};

/** Agent types remembered; past it the oldest is forgotten (its next registration is validated). */
export const ADMITTED_TYPES_MAX = 100_000;

type Admitted = {
  readonly digest: string;
  readonly generation: number;
  readonly revision: number;
  readonly warnings: readonly string[];
  readonly a2aVersion: A2aVersion | undefined;
};

export function specDigest(text: string): string {
  return createHash("sha256").update(text).digest("base64");
}

export class AdmittedSpecs {
  private readonly byType = new Map<string, Admitted>();

  constructor(private readonly maxTypes = ADMITTED_TYPES_MAX) {}

  /**
   * The validation of the text with this digest, when the stored spec of the type (`stored`,
   * from the view) is the one it was found to be, under the same named schemas.
   */
  get(agentType: string, digest: string, generation: number, stored: { spec: AgentSpec; revision: number } | undefined): AdmittedSpec | undefined {
    const known = this.byType.get(agentType);
    if (!known || !stored || known.digest !== digest || known.generation !== generation || known.revision !== stored.revision) return undefined;
    return { spec: stored.spec, warnings: [...known.warnings], a2aVersion: known.a2aVersion };
  }

  /** The spec record of the type at `revision` holds the spec admitted from the text with this digest. */
  remember(agentType: string, digest: string, generation: number, revision: number, admitted: AdmittedSpec): void {
    this.byType.delete(agentType);
    if (this.byType.size >= this.maxTypes) this.byType.delete(this.byType.keys().next().value as string);
    this.byType.set(agentType, { digest, generation, revision, warnings: [...admitted.warnings], a2aVersion: admitted.a2aVersion });
  }
}
