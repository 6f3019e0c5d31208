/**
 * Admitting the spec of a register body (issue 36: out of registrar.ts): the card, tool spec or
 * server.json imported as a raw spec, then validated as any spec, its named refs resolved and
 * its schemas compiled in worker threads, charged to the agent type's validation budget. The
 * same text validated at once by several registrations (the replicas of a new agent starting
 * together) is validated once; the text a type's stored spec was admitted from is not admitted
 * again (admitted-specs.ts).
 */
import { RateLimitedError, invalidSpec } from "../../domain/errors.js";
import { asCardError, specOfRegisterBody } from "../../domain/interop/register-body.js";
import type { RegisterMessage } from "../../domain/messages.js";
import type { TypeBudgets } from "../../domain/rate-limit.js";
import { describeIssues, finishSpec, parseSpec, specSchemas, type ValidatedSpec } from "../../domain/spec/validation.js";
import { resolveForWrite } from "../queries/schema-refs.js";
import { WorkSlices } from "../work-slices.js";
import { AdmittedSpecs, specDigest, type AdmittedSpec } from "./admitted-specs.js";
import type { RegistrarDeps } from "./registrar.js";

const MAX_REF_ISSUES = 20;

/** Register body fields that belong to the instance, not to the spec: left out of the digest. */
const INSTANCE_FIELDS = ["instance_id", "heartbeat_interval_ms", "status", "metadata", "replace"] as const;

/** A register body's spec, validated, with what the admitted specs remember it by. */
export type Admission = AdmittedSpec & { readonly digest: string; readonly generation: number };

export type SpecAdmissionDeps = Pick<RegistrarDeps, "view" | "store" | "checker" | "clock" | "specBudget" | "workClock">;

export class SpecAdmission {
  /** Which register body each type's stored spec was admitted from: the same body again is not admitted again. */
  private readonly admitted = new AdmittedSpecs();
  /** Validations under way, by agent type, named-schema generation and spec digest: see admit(). */
  private readonly validating = new Map<string, Promise<AdmittedSpec>>();

  constructor(private readonly deps: SpecAdmissionDeps) {}

  /**
   * The spec a register body carries, in whichever form (a spec, a card, a tool spec), with
   * the warnings of its import and its validation. A body whose spec-deciding part (all but the
   * instance's own fields) is the text the type's stored spec was admitted from is that spec
   * (admitted-specs.ts): neither imported nor validated again.
   */
  async admit(agentType: string, msg: RegisterMessage, isStatic: boolean): Promise<Admission> {
    const budget = isStatic ? undefined : this.deps.specBudget;
    const now = this.deps.clock.now();
    const form: Record<string, unknown> = { ...msg };
    for (const field of INSTANCE_FIELDS) delete form[field];
    const digest = specDigest(JSON.stringify(form));
    const generation = this.deps.view.namedSchemas.generation;
    const known = this.admitted.get(agentType, digest, generation, this.deps.view.get(agentType));
    if (known) return { ...known, digest, generation };
    // The same text already being validated (the replicas of a new agent starting at once): its
    // outcome is this one's too, validated and charged once. Each used to validate it again, so
    // the type's budget ran out and most of a rollout's first registrations were refused 503.
    const key = `${agentType}\u0000${generation}\u0000${digest}`;
    const flying = this.validating.get(key);
    if (flying) return { ...admittedCopy(await flying), digest, generation };
    const wait = budget?.waitMs(agentType, now) ?? 0;
    if (budget && wait > 0) throw budgetSpent(agentType, budget, wait);
    const run = (async (): Promise<AdmittedSpec> => {
      const body = specOfRegisterBody(agentType, msg);
      const validated = await this.validate(body.raw, agentType, budget, now).catch((e: unknown) => {
        throw asCardError(e, body.source, msg, body.raw);
      });
      return { spec: validated.spec, warnings: [...body.warnings, ...validated.warnings], a2aVersion: body.a2aVersion };
    })();
    this.validating.set(key, run);
    try {
      return { ...admittedCopy(await run), digest, generation };
    } finally {
      this.validating.delete(key);
    }
  }

  /**
   * The shape (zod) is checked here, cheaply; the schemas are compiled by the checker, and the
   * compilation time it reports is charged to the type's budget. So is the time resolving the
   * schemas' refs and preparing the resolved schemas takes on the event loop (issue 35, item
   * 6), slice by slice: a type whose budget runs out there is refused as it would be before a
   * compilation, and nothing of it is stored.
   */
  private async validate(rawSpec: unknown, agentType: string, budget: TypeBudgets | undefined, now: number): Promise<ValidatedSpec> {
    const spec = parseSpec(rawSpec);
    // Named refs must resolve; the schemas compiled are the resolved ones (the stored spec keeps the refs).
    const paths = spec.capabilities.flatMap((_, i) => [`capabilities.${i}.input_schema`, `capabilities.${i}.output_schema`]);
    const charge = budget
      ? (ms: number) => {
          budget.spend(agentType, ms, now);
          const wait = budget.waitMs(agentType, now);
          if (wait > 0) throw budgetSpent(agentType, budget, wait);
        }
      : undefined;
    const slices = new WorkSlices({ now: this.deps.workClock ?? (() => performance.now()), charge });
    const refs = await resolveForWrite(specSchemas(spec), paths, this.deps.view.namedSchemas, this.deps.store, slices);
    if ("issues" in refs) throw invalidSpec(`spec is invalid: ${describeIssues(refs.issues)}`, refs.issues.slice(0, MAX_REF_ISSUES));
    // The checker's cheap half, on the loop, goes on in the same charged slices; its workers' time is charged after.
    const { verdicts, ms } = await this.deps.checker.checkAll(refs.resolved, slices);
    budget?.spend(agentType, ms, now);
    return finishSpec(rawSpec, spec, verdicts);
  }

  /** The admission's spec is stored, in the spec record of this revision: the same body again is that spec. */
  remember(agentType: string, admission: Admission, revision: number): void {
    this.admitted.remember(agentType, admission.digest, admission.generation, revision, admission);
  }
}

/** A caller's own copy: the warnings array is the caller's to extend. */
const admittedCopy = (a: AdmittedSpec): AdmittedSpec => ({ ...a, warnings: [...a.warnings] });

/** The refusal of a type that used its spec validation budget, by compilation or by resolving refs. */
function budgetSpent(agentType: string, budget: TypeBudgets, wait: number): RateLimitedError {
  return new RateLimitedError(`agent type ${agentType} used its spec validation budget (${budget.ratePerSecond} ms per second); retry in ${wait} ms`);
}
