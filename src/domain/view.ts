/**
 * The in-memory view every replica builds from the bucket's change log. Entries are applied
 * in store order; each apply returns the events that transition caused, so events come from
 * the store alone (PROTOCOL.md section 5). Applying is idempotent by revision: an entry at or
 * below the last applied revision is ignored, which makes a watch that resumes with overlap safe.
 * The view mutates in place (100,000 heartbeats a minute must not copy the world); readers get
 * ReadonlyMap/readonly types.
 */
import { capabilitiesByName, capabilityChanges, readyCapabilities } from "./capability-changes.js";
import {
  decodeAgentRecord,
  decodeInstanceRecord,
  liveInstanceRecord,
  parseKey,
  type AgentRecord,
  type RemovalReason,
} from "./records.js";
import { AgentStatus, InstanceStatus, aggregateStatus, type AgentState, type InstanceState, type Mutable } from "./model.js";
import type { RegistryEvent, StoreEvent } from "./events.js";
import type { Current } from "./registration.js";
import type { AgentSpec, Capability } from "./spec.js";
import { CapabilityIndex } from "./capability-index.js";
import { SchemaSharing } from "./schema-sharing.js";

export type StoreEntry = {
  readonly key: string;
  readonly revision: number;
  readonly operation: "PUT" | "DEL" | "PURGE";
  readonly value: Uint8Array;
  /** When the store accepted the write (ms); the time of derived events. */
  readonly created: number;
};

/** Something kept in step with agents (query indexes); told of every change but plain heartbeats. */
export type AgentListener = { update(agentType: string, agent: AgentState | undefined): void };

type Tombstone = { readonly at: number; readonly reason: RemovalReason; readonly revision: number };

type MutableAgent = {
  agent_type: string;
  spec: AgentSpec;
  registered_at: number;
  updated_at: number;
  revision: number;
  instances: Map<string, InstanceState>;
  status: AgentStatus;
  deregistered_at: number | null;
  /** Instances that left and whose tombstones are still in the store. */
  gone: Map<string, Tombstone>;
  /** When an instance last left by any means (a tombstone or a deleted key). */
  left_at: number;
  static: boolean;
  /** Capability name -> the capability in the spec, computed once per spec. */
  caps: ReadonlyMap<string, Capability>;
};


export class RegistryView {
  /** Last store revision applied. */
  revision = 0;
  /** Entries that did not decode (written by something that is not this registry). */
  undecodable = 0;
  private readonly agents = new Map<string, MutableAgent>();
  /** Instances whose agent record is not (yet) known: kept so order of arrival does not matter. */
  private readonly orphans = new Map<string, Map<string, InstanceState>>();
  private readonly orphanTombstones = new Map<string, Map<string, Tombstone>>();
  private readonly index = new CapabilityIndex();
  private readonly listeners: AgentListener[] = [];
  /** One copy of each distinct capability schema across all specs (docs/performance.md). */
  private readonly schemas = new SchemaSharing();
  /** Smallest last_heartbeat and interval of live instances written since takeInstanceChanges(). */
  private changedMinHeartbeat = Infinity;
  private changedMinInterval = Infinity;

  addListener(listener: AgentListener): void {
    this.listeners.push(listener);
    for (const a of this.agents.values()) listener.update(a.agent_type, a);
  }

  get(agentType: string): AgentState | undefined {
    return this.agents.get(agentType);
  }

  all(): IterableIterator<AgentState> {
    return this.agents.values();
  }

  get size(): number {
    return this.agents.size;
  }

  /** Agent types declaring a capability, whatever their status. */
  providersOf(capability: string): ReadonlySet<string> {
    return this.index.providersOf(capability);
  }

  /** Agent types whose spec names this nats_subject, whatever their status. */
  consumersOf(natsSubject: string): ReadonlySet<string> {
    return this.index.consumersOf(natsSubject);
  }

  capabilityNames(): IterableIterator<string> {
    return this.index.capabilityNames();
  }

  instance(agentType: string, instanceId: string): InstanceState | undefined {
    return this.agents.get(agentType)?.instances.get(instanceId) ?? this.orphans.get(agentType)?.get(instanceId);
  }

  /** Tombstones (instances that left) of an agent type, for the retention sweep. */
  tombstones(agentType: string): ReadonlyMap<string, Tombstone> {
    return this.agents.get(agentType)?.gone ?? this.orphanTombstones.get(agentType) ?? EMPTY_MAP;
  }

  /** Agent types with tombstones but no agent record; the sweep clears them too. */
  orphanTombstoneTypes(): IterableIterator<string> {
    return this.orphanTombstones.keys();
  }

  /** The stored records of an agent and one of its instances as this view last saw them. */
  current(agentType: string, instanceId: string | null): Current {
    const a = this.agents.get(agentType);
    const agent = a ? { record: agentRecordOf(a), revision: a.revision } : null;
    if (instanceId === null) return { agent, instance: null };
    const live = this.instance(agentType, instanceId);
    if (live) {
      const record = liveInstanceRecord({
        version: live.version,
        status: live.status,
        registered_at: live.registered_at,
        last_heartbeat: live.last_heartbeat,
        heartbeat_interval_ms: live.heartbeat_interval_ms,
        active_tasks: live.active_tasks,
        metadata: live.metadata,
        spec_changed: false,
      });
      return { agent, instance: { record, revision: live.revision } };
    }
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

  isStatic(agentType: string): boolean {
    return this.agents.get(agentType)?.static ?? false;
  }

  /**
   * Forgets everything (listeners are told every agent left), for a full reload when the
   * store's history no longer matches what was applied (its revision went backwards).
   */
  clear(): void {
    const types = [...this.agents.keys()];
    this.agents.clear();
    this.schemas.clear();
    this.orphans.clear();
    this.orphanTombstones.clear();
    this.index.clear();
    this.revision = 0;
    for (const t of types) this.notify(t, undefined);
  }

  /**
   * Lower bounds of the live instances written (or adopted from orphans) since the last call,
   * or null when none was. An instance's deadline can only move earlier by such a write, and it
   * is then at least minLastHeartbeat + missed x minIntervalMs: the evictor uses this to skip
   * passes over the whole fleet while nothing can be due (docs/performance.md).
   */
  takeInstanceChanges(): { minLastHeartbeat: number; minIntervalMs: number } | null {
    if (this.changedMinHeartbeat === Infinity) return null;
    const changes = { minLastHeartbeat: this.changedMinHeartbeat, minIntervalMs: this.changedMinInterval };
    this.changedMinHeartbeat = Infinity;
    this.changedMinInterval = Infinity;
    return changes;
  }

  private noteInstance(i: InstanceState): void {
    if (i.last_heartbeat < this.changedMinHeartbeat) this.changedMinHeartbeat = i.last_heartbeat;
    if (i.heartbeat_interval_ms < this.changedMinInterval) this.changedMinInterval = i.heartbeat_interval_ms;
  }

  /** Records a revision that carries no agent data (a reserved key), so min_revision waits see it. */
  noteRevision(revision: number): void {
    if (revision > this.revision) this.revision = revision;
  }

  apply(entry: StoreEntry): StoreEvent[] {
    if (entry.revision <= this.revision) return [];
    this.revision = entry.revision;
    const key = parseKey(entry.key);
    let events: RegistryEvent[] = [];
    if (key.kind === "agent") events = this.applyAgent(key.agentType, entry);
    else if (key.kind === "instance") events = this.applyInstance(key.agentType, key.instanceId, entry);
    // The events are this call's own objects: completing them in place, rather than spreading
    // each into a new one (1.6 µs each), took 0.2 s off loading 100,000 instances (docs/performance.md).
    return events.map((e, index) => Object.assign(e, { revision: entry.revision, index, time: entry.created }));
  }

  private applyAgent(agentType: string, entry: StoreEntry): RegistryEvent[] {
    const existing = this.agents.get(agentType);
    const before = readyCapabilities(existing);
    if (entry.operation !== "PUT") {
      if (!existing) return [];
      this.agents.delete(agentType);
      this.schemas.gone(agentType);
      this.index.remove(agentType, existing.spec);
      this.notify(agentType, undefined);
      return capabilityChanges(agentType, before, readyCapabilities(undefined), entry.revision, this.ready);
    }
    const record = decodeAgentRecord(entry.value);
    if (!record) {
      this.undecodable++;
      return [];
    }
    this.schemas.changed(agentType);
    let agent: MutableAgent;
    if (existing) {
      this.index.remove(agentType, existing.spec);
      agent = existing;
      agent.spec = record.spec;
      agent.registered_at = record.registered_at;
      agent.updated_at = record.updated_at;
      agent.revision = entry.revision;
      agent.static = record.static === true;
      agent.caps = capabilitiesByName(record.spec);
    } else {
      agent = {
        agent_type: detached(agentType),
        spec: record.spec,
        registered_at: record.registered_at,
        updated_at: record.updated_at,
        revision: entry.revision,
        instances: this.orphans.get(agentType) ?? new Map(),
        status: AgentStatus.Deregistered,
        deregistered_at: null,
        gone: this.orphanTombstones.get(agentType) ?? new Map(),
        left_at: 0,
        static: record.static === true,
        caps: capabilitiesByName(record.spec),
      };
      this.orphans.delete(agentType);
      this.orphanTombstones.delete(agentType);
      this.agents.set(agent.agent_type, agent);
      // Orphans become evictable only now.
      for (const i of agent.instances.values()) this.noteInstance(i);
    }
    this.index.add(agentType, agent.spec);
    this.refreshStatus(agent);
    this.notify(agentType, agent);
    return capabilityChanges(agentType, before, readyCapabilities(agent), entry.revision, this.ready);
  }

  private applyInstance(agentType: string, instanceId: string, entry: StoreEntry): RegistryEvent[] {
    const agent = this.agents.get(agentType);
    const instances = agent?.instances ?? getOrCreate(this.orphans, agentType);
    const gone = agent?.gone ?? getOrCreate(this.orphanTombstones, agentType);
    const previous = instances.get(instanceId);
    const before = readyCapabilities(agent);
    const events: RegistryEvent[] = [];
    const record = entry.operation === "PUT" ? decodeInstanceRecord(entry.value) : null;
    if (entry.operation === "PUT" && !record) {
      this.undecodable++;
      return [];
    }

    if (record && record.kind === "instance") {
      const statusBefore = previous?.status;
      // Updated in place: a new object per heartbeat (with its numbers and strings) lived until
      // the next heartbeat, so every one was promoted, the larger part of what the old
      // generation gained under 3,300 heartbeats a second (docs/performance.md). Whoever keeps
      // an instance across an await takes a copy (the evictor does). A new instance keeps its
      // agent's string rather than the one cut from this entry's key, which would keep the
      // whole key alive.
      const next = (previous ?? { agent_type: agent?.agent_type ?? agentType, instance_id: detached(instanceId) }) as Mutable<InstanceState>;
      if (next.version !== record.version) next.version = record.version;
      next.status = sharedStatus(record.status);
      next.registered_at = record.registered_at;
      next.last_heartbeat = record.last_heartbeat;
      next.heartbeat_interval_ms = record.heartbeat_interval_ms;
      next.active_tasks = record.active_tasks;
      next.metadata = hasKeys(record.metadata) ? record.metadata : NO_METADATA;
      next.revision = entry.revision;
      if (previous === undefined) instances.set(next.instance_id, next);
      this.noteInstance(next);
      gone.delete(instanceId);
      if (agent) {
        if (!previous) {
          events.push({
            type: "registry.agent.registered",
            subject: agentType,
            data: {
              agent_type: agentType,
              version: record.version,
              instance_id: instanceId,
              tenant_scope: agent.spec.tenant_scope,
              first_instance: instances.size === 1,
              spec_changed: record.spec_changed,
              revision: entry.revision,
            },
          });
        } else if (statusBefore !== undefined && statusBefore !== next.status) {
          events.push({
            type: "registry.agent.status_changed",
            subject: agentType,
            data: { agent_type: agentType, instance_id: instanceId, from: statusBefore, to: next.status, revision: entry.revision },
          });
        }
      }
    } else {
      // A tombstone (the instance left, with its reason) or a DEL/PURGE of the key.
      if (record && record.kind === "gone") gone.set(instanceId, { at: record.at, reason: record.reason, revision: entry.revision });
      else gone.delete(instanceId);
      if (previous) {
        instances.delete(instanceId);
        if (agent) {
          agent.left_at = Math.max(agent.left_at, record && record.kind === "gone" ? record.at : entry.created);
          events.push({
            type: "registry.agent.deregistered",
            subject: agentType,
            data: {
              agent_type: agentType,
              instance_id: instanceId,
              reason: record && record.kind === "gone" ? record.reason : "operator",
              agent_removed: instances.size === 0,
              last_heartbeat: new Date(previous.last_heartbeat).toISOString(),
              revision: entry.revision,
            },
          });
        }
      }
    }
    if (!agent) return [];
    const statusBefore = agent.status;
    this.refreshStatus(agent);
    if (events.length > 0 || statusBefore !== agent.status) this.notify(agentType, agent);
    return events.concat(capabilityChanges(agentType, before, readyCapabilities(agent), entry.revision, this.ready));
  }

  private refreshStatus(agent: MutableAgent): void {
    agent.status = aggregateStatus(agent.instances.values());
    if (agent.status !== AgentStatus.Deregistered) agent.deregistered_at = null;
    else {
      let last = Math.max(agent.updated_at, agent.left_at);
      for (const t of agent.gone.values()) if (t.at > last) last = t.at;
      agent.deregistered_at = last;
    }
  }

  private readonly ready = (capability: string): string[] => this.readyProviders(capability);

  /** Shares the capability schemas of up to `limit` changed agent types (SchemaSharing); returns how many are left. */
  shareSchemas(limit: number): number {
    return this.schemas.share(
      limit,
      (agentType) => this.agents.get(agentType)?.spec,
      () => Array.from(this.agents.values(), (a) => a.spec),
    );
  }

  /** Distinct capability schemas the view holds one shared copy of. */
  get distinctSchemas(): number {
    return this.schemas.distinct;
  }

  readyProviders(capability: string): string[] {
    const out: string[] = [];
    for (const t of this.providersOf(capability)) if (this.agents.get(t)?.status === AgentStatus.Ready) out.push(t);
    return out.sort();
  }

  private notify(agentType: string, agent: AgentState | undefined): void {
    for (const l of this.listeners) l.update(agentType, agent);
  }
}


function agentRecordOf(a: MutableAgent): AgentRecord {
  const { spec, registered_at, updated_at } = a;
  return a.static ? { kind: "agent", spec, registered_at, updated_at, static: true } : { kind: "agent", spec, registered_at, updated_at };
}
/** Shared by every instance without metadata (most of them): one object instead of 100,000. */
const NO_METADATA: Readonly<Record<string, string>> = Object.freeze({});

/** The module's constant for a status string read from the store. */
function sharedStatus(status: InstanceStatus): InstanceStatus {
  switch (status) {
    case InstanceStatus.Ready:
      return InstanceStatus.Ready;
    case InstanceStatus.Draining:
      return InstanceStatus.Draining;
    case InstanceStatus.Registered:
      return InstanceStatus.Registered;
    default:
      return status;
  }
}

function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/**
 * A copy of `s` that does not keep alive the longer string it was cut from: V8 makes substrings
 * of 13 characters or more as slices sharing their parent, here a store key or message subject,
 * and 100,000 instances kept 15 MB of those alive (docs/performance.md).
 */
const detached = (s: string): string => (" " + s).slice(1);
const EMPTY_MAP: ReadonlyMap<string, Tombstone> = new Map();

function getOrCreate<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = map.get(key);
  if (!m) {
    m = new Map();
    map.set(key, m);
  }
  return m;
}

