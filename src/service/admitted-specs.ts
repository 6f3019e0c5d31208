/**
 * Which spec text each agent type's stored spec was validated from, so that a replica of the
 * type registering the same spec again is not validated again. Every replica of a type sends
 * the same spec, and each registration used to pay for the whole validation (the zod shape,
 * the named-ref resolution, the schema walks and the comparison with the stored spec): a
 * quarter of the registry's CPU in the registration benchmark.
 *
 * Per agent type, one digest of the text (SHA-256: a spec that collides with another would be
 * admitted unchecked, so the hash must be one nobody can aim at), the revision of the spec
 * record that holds the validation of that text, the generation of named schemas it was
 * validated under and its warnings. A hit hands back the view's own spec object, so nothing
 * is held twice and the comparison with the stored spec is an identity. It holds only while
 * the view's spec record is that very revision and its named schemas are that generation
 * (named schemas are immutable, but one may be deleted by hand). Refusals are not kept: each
 * is judged again, so its message tells the current truth.
 */
import { createHash } from "node:crypto";
import type { AgentSpec } from "../domain/spec/spec.js";
import type { ValidatedSpec } from "../domain/spec/validation.js";

/** Agent types remembered; past it the oldest is forgotten (its next registration is validated). */
export const ADMITTED_TYPES_MAX = 100_000;

type Admitted = { readonly digest: string; readonly generation: number; readonly revision: number; readonly warnings: readonly string[] };

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
  get(agentType: string, digest: string, generation: number, stored: { spec: AgentSpec; revision: number } | undefined): ValidatedSpec | undefined {
    const known = this.byType.get(agentType);
    if (!known || !stored || known.digest !== digest || known.generation !== generation || known.revision !== stored.revision) return undefined;
    return { spec: stored.spec, warnings: [...known.warnings] };
  }

  /** The spec record of the type at `revision` holds the validation of the text with this digest. */
  remember(agentType: string, digest: string, generation: number, revision: number, warnings: readonly string[]): void {
    this.byType.delete(agentType);
    if (this.byType.size >= this.maxTypes) this.byType.delete(this.byType.keys().next().value as string);
    this.byType.set(agentType, { digest, generation, revision, warnings: [...warnings] });
  }
}
