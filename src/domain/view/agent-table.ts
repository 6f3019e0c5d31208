/**
 * What the view holds of each agent type, as the store's records say: the agent types whose
 * record it has applied, and the instances and tombstones of those whose record it has not
 * (yet): orphans, kept so the order in which keys arrive does not matter. The view applies
 * entries to it; the registrar reads the stored records back from it (`current`, `storedOf`)
 * and the retention sweep its tombstones.
 */
import { recordOfInstance } from "../model/records.js";
import { AgentStatus, type InstanceState } from "../model/model.js";
import type { Current } from "../lifecycle/registration.js";
import { agentRecordOf, type MutableAgent, type Tombstone } from "./agent-state.js";
import { NOTHING_STORED } from "./stored-bytes.js";

const EMPTY_MAP: ReadonlyMap<string, Tombstone> = new Map();

export class AgentTable {
  readonly agents = new Map<string, MutableAgent>();
  /** Instances whose agent record is not (yet) known. */
  readonly orphans = new Map<string, Map<string, InstanceState>>();
  readonly orphanTombstones = new Map<string, Map<string, Tombstone>>();
  /**
   * Agent types that may hold something for the retention sweep: each got a tombstone or was
   * deregistered since the sweep last found it holding neither. A superset, trimmed by
   * retentionCandidates(): the sweep's pass over every type every 30 s cost about 0.2 s of CPU at
   * 100,000 types, nearly all of them live types with nothing to remove.
   */
  readonly retained = new Set<string>();

  instance(agentType: string, instanceId: string): InstanceState | undefined {
    return this.agents.get(agentType)?.instances.get(instanceId) ?? this.orphans.get(agentType)?.get(instanceId);
  }

  /** Tombstones (instances that left) of an agent type, for the retention sweep. */
  tombstones(agentType: string): ReadonlyMap<string, Tombstone> {
    return this.agents.get(agentType)?.gone ?? this.orphanTombstones.get(agentType) ?? EMPTY_MAP;
  }

  /** The live instances and tombstones of an agent type, made for an orphan when it has none. */
  instancesOf(agentType: string, agent: MutableAgent | undefined): { instances: Map<string, InstanceState>; gone: Map<string, Tombstone> } {
    if (agent) return { instances: agent.instances, gone: agent.gone };
    return { instances: getOrCreate(this.orphans, agentType), gone: getOrCreate(this.orphanTombstones, agentType) };
  }

  /** Whether anything of an agent type with no record is kept. */
  hasOrphans(agentType: string): boolean {
    return this.orphans.has(agentType) || this.orphanTombstones.has(agentType);
  }

  /** Forgets an orphan's maps once they are empty, so none is left behind. */
  pruneOrphans(agentType: string, instances: ReadonlyMap<string, unknown>, gone: ReadonlyMap<string, unknown>): void {
    if (instances.size === 0) this.orphans.delete(agentType);
    if (gone.size === 0) this.orphanTombstones.delete(agentType);
  }

  /**
   * Every agent type with tombstones (an agent record or not) or deregistered, for the
   * retention sweep, and perhaps a few that have neither any more: those are dropped as the
   * iteration reaches them. Safe to iterate across turns of the event loop (a Set's iterator
   * sees what is added meanwhile).
   */
  *retentionCandidates(): Generator<string> {
    for (const agentType of this.retained) {
      if (this.tombstones(agentType).size > 0 || this.agents.get(agentType)?.status === AgentStatus.Deregistered) yield agentType;
      else this.retained.delete(agentType);
    }
  }

  /** The stored records of an agent and one of its instances as this view last saw them. */
  current(agentType: string, instanceId: string | null): Current {
    const a = this.agents.get(agentType);
    const agent = a ? { record: agentRecordOf(a), revision: a.revision } : null;
    if (instanceId === null) return { agent, instance: null };
    const live = this.instance(agentType, instanceId);
    if (live) return { agent, instance: { record: recordOfInstance(live), revision: live.revision } };
    const gone = this.tombstones(agentType).get(instanceId);
    if (gone) {
      return {
        agent,
        instance: {
          record: { kind: "gone", version: "", reason: gone.reason, at: gone.at, registered_at: 0, last_heartbeat: 0 },
          revision: gone.revision,
        },
      };
    }
    return { agent, instance: null };
  }

  /**
   * The size of an instance key's value (`instanceId`), or with null the agent type's spec
   * key's, in the bucket as this view estimates it (stored-bytes.ts); NOTHING_STORED for a key it does not know.
   */
  storedOf(agentType: string, instanceId: string | null): number {
    if (instanceId === null) return this.agents.get(agentType)?.stored ?? NOTHING_STORED;
    return this.instance(agentType, instanceId)?.stored ?? this.tombstones(agentType).get(instanceId)?.stored ?? NOTHING_STORED;
  }

  clear(): void {
    this.agents.clear();
    this.orphans.clear();
    this.orphanTombstones.clear();
    this.retained.clear();
  }
}

function getOrCreate<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = map.get(key);
  if (!m) {
    m = new Map();
    map.set(key, m);
  }
  return m;
}
