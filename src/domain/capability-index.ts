/**
 * Which agent types declare each capability and consume each NATS subject, whatever their
 * status: lookups start from the first, and the rule that one subject belongs to one agent
 * type (PROTOCOL.md section 3) checks the second.
 */
import type { AgentSpec } from "./spec.js";
import { SetIndex } from "./set-index.js";

export class CapabilityIndex {
  /** capability name -> agent types declaring it. */
  private readonly byCapability = new SetIndex();
  /** nats_subject -> agent types consuming it. */
  private readonly bySubject = new SetIndex();

  add(agentType: string, spec: AgentSpec): void {
    for (const c of spec.capabilities) this.byCapability.add(c.name, agentType);
    this.bySubject.add(spec.nats_subject, agentType);
  }

  remove(agentType: string, spec: AgentSpec): void {
    for (const c of spec.capabilities) this.byCapability.delete(c.name, agentType);
    this.bySubject.delete(spec.nats_subject, agentType);
  }

  providersOf(capability: string): ReadonlySet<string> {
    return this.byCapability.get(capability);
  }

  consumersOf(natsSubject: string): ReadonlySet<string> {
    return this.bySubject.get(natsSubject);
  }

  capabilityNames(): IterableIterator<string> {
    return this.byCapability.keys();
  }

  clear(): void {
    this.byCapability.clear();
    this.bySubject.clear();
  }
}
