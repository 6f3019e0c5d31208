/**
 * The quotas a registration must fit (docs/reliability.md, "Hardening"): without them one
 * restricted agent user grew the bucket by 117 MB in 3.4 s, and 2,400 instances with 200 KB of
 * metadata took the registry to 808 MB. Each refusal is `limit_exceeded` naming the setting.
 * The counts come from this replica's view, so two replicas taking registrations at the same
 * moment may overshoot a count by what they take meanwhile: a quota, not a lock. Near a limit
 * the registrar first brings the view up to the store (nearQuota), so one client registering
 * one instance after another stops exactly at it.
 */
import { limitExceeded } from "../errors.js";

export type Quotas = {
  readonly maxMetadataBytes: number;
  readonly maxInstancesPerType: number;
  readonly maxTypesPerTenant: number;
};

export type RegistrationFacts = {
  /** JSON bytes of the instance metadata. */
  readonly metadataBytes: number;
  /** Whether the instance is new (a known one registering again changes no count). */
  readonly newInstance: boolean;
  /** Live instances of the agent type now. */
  readonly instancesOfType: number;
  /** Whether the agent type is new to the registry. */
  readonly newType: boolean;
  /** Agent types of the tenant (or of the shared agents) now. */
  readonly typesOfTenant: number;
  readonly agentType: string;
  readonly tenant: string | null;
};

export function checkQuotas(f: RegistrationFacts, q: Quotas): void {
  if (f.metadataBytes > q.maxMetadataBytes) {
    throw limitExceeded(`instance metadata is ${f.metadataBytes} bytes of JSON`, "REGISTRY_MAX_METADATA_BYTES", q.maxMetadataBytes);
  }
  if (f.newInstance && f.instancesOfType >= q.maxInstancesPerType) {
    throw limitExceeded(`agent type ${f.agentType} already has ${f.instancesOfType} live instances`, "REGISTRY_MAX_INSTANCES_PER_TYPE", q.maxInstancesPerType);
  }
  if (f.newType && f.typesOfTenant >= q.maxTypesPerTenant) {
    const who = f.tenant === null ? "the shared agents" : `tenant ${f.tenant}`;
    throw limitExceeded(`${who} already have ${f.typesOfTenant} agent types`, "REGISTRY_MAX_TYPES_PER_TENANT", q.maxTypesPerTenant);
  }
}

/** How close to a count limit the view's lag (a few writes at most) could matter. */
export const QUOTA_MARGIN = 64;

/** Whether a count is within QUOTA_MARGIN of its limit, where a lagging view could let one too many through. */
export function nearQuota(f: RegistrationFacts, q: Quotas): boolean {
  return (f.newInstance && f.instancesOfType >= q.maxInstancesPerType - QUOTA_MARGIN) || (f.newType && f.typesOfTenant >= q.maxTypesPerTenant - QUOTA_MARGIN);
}
