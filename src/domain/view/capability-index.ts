/**
 * Which agent types declare each capability, consume each NATS subject and belong to each
 * tenant, whatever their status: lookups start from the first, the rule that one subject
 * belongs to one agent type (PROTOCOL.md section 3) checks the second, and the quota on agent
 * types per tenant counts the third.
 */
import type { AgentSpec } from "../spec/spec.js";
import { SetIndex } from "../set-index.js";

/** The read side, for the query index that shares this one. */
export type CapabilityLookup = Pick<CapabilityIndex, "providersOf" | "consumersOf" | "capabilityNames" | "sortedCapabilityNames" | "typesOfTenant">;

export class CapabilityIndex {
  /** capability name -> agent types declaring it. */
  private readonly byCapability = new SetIndex();
  /** nats_subject -> agent types consuming it. */
  private readonly bySubject = new SetIndex();
  /** tenant_scope ("" for shared agents) -> agent types. */
  private readonly byTenant = new SetIndex();
  /** Capability names in order, made again only after a spec changed (pages of `capabilities` read it). */
  private sorted: string[] | null = null;

  add(agentType: string, spec: AgentSpec): void {
    this.sorted = null;
    for (const c of spec.capabilities) this.byCapability.add(c.name, agentType);
    this.bySubject.add(spec.nats_subject, agentType);
    this.byTenant.add(spec.tenant_scope ?? "", agentType);
  }

  remove(agentType: string, spec: AgentSpec): void {
    this.sorted = null;
    for (const c of spec.capabilities) this.byCapability.delete(c.name, agentType);
    this.bySubject.delete(spec.nats_subject, agentType);
    this.byTenant.delete(spec.tenant_scope ?? "", agentType);
  }

  providersOf(capability: string): ReadonlySet<string> {
    return this.byCapability.get(capability);
  }

  consumersOf(natsSubject: string): ReadonlySet<string> {
    return this.bySubject.get(natsSubject);
  }

  /** Agent types of a tenant (null: the shared agents). */
  typesOfTenant(tenant: string | null): number {
    return this.byTenant.get(tenant ?? "").size;
  }

  capabilityNames(): IterableIterator<string> {
    return this.byCapability.keys();
  }

  /** Every capability name, sorted; do not mutate. */
  sortedCapabilityNames(): readonly string[] {
    this.sorted ??= [...this.byCapability.keys()].sort();
    return this.sorted;
  }

  clear(): void {
    this.sorted = null;
    this.byCapability.clear();
    this.bySubject.clear();
    this.byTenant.clear();
  }
}
