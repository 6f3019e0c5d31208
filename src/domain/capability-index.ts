/**
 * Which agent types declare each capability and consume each NATS subject, whatever their
 * status: lookups start from the first, and the rule that one subject belongs to one agent
 * type (PROTOCOL.md section 3) checks the second.
 */
import type { AgentSpec } from "./spec.js";

const EMPTY: ReadonlySet<string> = new Set();

export class CapabilityIndex {
  /** capability name -> agent types declaring it. */
  private readonly byCapability = new Map<string, Set<string>>();
  /** nats_subject -> agent types consuming it. */
  private readonly bySubject = new Map<string, Set<string>>();

  add(agentType: string, spec: AgentSpec): void {
    for (const c of spec.capabilities) setOf(this.byCapability, c.name).add(agentType);
    setOf(this.bySubject, spec.nats_subject).add(agentType);
  }

  remove(agentType: string, spec: AgentSpec): void {
    for (const c of spec.capabilities) removeFrom(this.byCapability, c.name, agentType);
    removeFrom(this.bySubject, spec.nats_subject, agentType);
  }

  providersOf(capability: string): ReadonlySet<string> {
    return this.byCapability.get(capability) ?? EMPTY;
  }

  consumersOf(natsSubject: string): ReadonlySet<string> {
    return this.bySubject.get(natsSubject) ?? EMPTY;
  }

  capabilityNames(): IterableIterator<string> {
    return this.byCapability.keys();
  }

  clear(): void {
    this.byCapability.clear();
    this.bySubject.clear();
  }
}

function setOf(map: Map<string, Set<string>>, key: string): Set<string> {
  let s = map.get(key);
  if (!s) {
    s = new Set();
    map.set(key, s);
  }
  return s;
}

function removeFrom(map: Map<string, Set<string>>, key: string, value: string): void {
  const s = map.get(key);
  if (!s) return;
  s.delete(value);
  if (s.size === 0) map.delete(key);
}
