/**
 * Why a stored spec is no longer verified (docs/trust.md, "When trust roots change"), as its
 * record keeps it after a re-judgement (trust-standing.ts). Apart from the judgement so the
 * routing checks (approval-policy.ts) can read it without importing the trust roots.
 */
/** Why a stored spec is not verified (any longer), written by a re-judgement only. */
export type TrustLapse = {
  readonly state: "unverified" | "withheld";
  /** A refusal reason (trust-refusal.ts), `unsigned`, or `mode_off`. */
  readonly reason: string;
  /** The key id the spec was (or its signature claims to be) signed with; null: unsigned. */
  readonly kid: string | null;
  /** Epoch ms of the judgement that found it. */
  readonly at: number;
};

/** Whether a spec record may be routed as far as trust goes: not withheld. */
export function trustAllowsRouting(lapse: TrustLapse | undefined): boolean {
  return lapse?.state !== "withheld";
}
