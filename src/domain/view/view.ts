/**
 * The in-memory view every replica builds from the bucket's change log. Entries are applied
 * in store order; each apply returns the events that transition caused, so events come from
 * the store alone (PROTOCOL.md section 5). Applying is idempotent by revision: an entry at or
 * below the last applied revision is ignored, which makes a watch that resumes with overlap safe.
 * The view mutates in place (100,000 heartbeats a minute must not copy the world); readers get
 * ReadonlyMap/readonly types.
 */
import { isRoutable } from "../trust/approval-policy.js";
import { recordBefore, recordEvents } from "./record-events.js";
import { capabilityChanges, readyCapabilities } from "./capability-changes.js";
import { newAgentState, updateAgentState, type MutableAgent, type Tombstone } from "./agent-state.js";
import {
  agentKey,
  parseKey,
  type ParsedKey,
  readAgentRecord,
  readInstanceRecord,
  RemovalReason,
  type AgentRecord,
} from "../model/records.js";
import { checkKeyTokens } from "../model/record-shapes.js";
import { AgentStatus, STATIC_INSTANCE_ID, aggregateStatus, type AgentState, type InstanceState, type InstanceStatus, type Mutable } from "../model/model.js";
import type { DerivedEvent, StoreEvent } from "./events.js";
import type { Current } from "../lifecycle/registration.js";
import { AgentTable } from "./agent-table.js";
import { CapabilityIndex, type CapabilityLookup } from "./capability-index.js";
import { SchemaSharing } from "./schema-sharing.js";
import type { Clock, StoreEntry } from "../ports.js";
import { detached } from "./memory.js";
import { newInstanceState, updateInstanceState } from "./instance-state.js";
import { deregisteredEvent, registeredEvent, statusChangedEvent } from "./instance-events.js";
import { InstanceChanges, type InstanceChangeSummary } from "./instance-changes.js";
import { isSubjectClaimKey, SubjectClaimBook } from "../model/subject-claims.js";
import { TrustRootsBook } from "./trust-roots-book.js";
import { isTrustRootsKey } from "../trust/bucket-trust.js";
import { InstanceTally } from "./instance-tally.js";
import { DependentsIndex } from "../graph/dependents-index.js";
import { dependencyChanges, watchDependencies } from "./dependency-events.js";
import { SchemaBook } from "../schemas/schema-book.js";
import { ByteTally } from "./byte-tally.js";
import { NOTHING_STORED, tombstoneBytes, valueBytes } from "./stored-bytes.js";

/** Something kept in step with agents (query indexes); told of every change but plain heartbeats. */
export type AgentListener = { update(agentType: string, agent: AgentState | undefined): void };

/** Told of every entry whose record the view could not read and skipped, with what was wrong. */
export type UnreadableListener = (key: string, revision: number, problem: string) => void;

/** What most applies return (a heartbeat, an entry of a quiet load): shared, never added to. */
const NO_EVENTS: readonly StoreEvent[] = Object.freeze([]);

export class RegistryView {
  /** Last store revision applied. */
  revision = 0;
  /**
   * Entries skipped because their record could not be read (not JSON, another shape, a key
   * that is not the registry's). A key whose record cannot be read is as good as absent: what
   * the view held for it goes, as for a delete, and the rest of the fleet is served (issue 14).
   */
  unreadable = 0;
  private readonly unreadableListeners: UnreadableListener[] = [];
  /** The agent types, their instances and tombstones, and the orphans (agent-table.ts). */
  private readonly table = new AgentTable();
  private readonly agents = this.table.agents;
  private readonly index = new CapabilityIndex();
  private readonly listeners: AgentListener[] = [];
  /** One copy of each distinct capability schema across all specs (docs/performance.md). */
  private readonly schemas = new SchemaSharing();
  /** What the evictor needs to know of instance writes since it last looked. */
  private readonly changes = new InstanceChanges();
  /** Which agent type owns which nats_subject (the `_registry.subjects.*` keys). */
  readonly claims = new SubjectClaimBook();
  /** v1.2: the tenants' trust roots the bucket holds (`_registry.trust.*`, docs/trust.md). */
  readonly trustRoots = new TrustRootsBook();
  /** Live instances of known agent types by status, for the gauges (no pass over the fleet). */
  private readonly tally = new InstanceTally();
  /** Who depends on what (PROTOCOL.md section 11.2), for dependency events and the graph. */
  readonly dependents = new DependentsIndex();
  /** The named, versioned schemas (`schemas.<name>.<version>` keys) and which agent types use each. */
  readonly namedSchemas = new SchemaBook();
  /** The bucket bytes each agent type and tenant holds, for the byte budgets (byte-tally.ts). */
  readonly bytes = new ByteTally();
  /**
   * While a history load runs (beginQuietLoad), the agent types changed since it began: their
   * status and listeners are brought up to date once, at endQuietLoad, not at each entry.
   */
  private quiet: Set<string> | null = null;

  /**
   * `clock` is this replica's own: each live instance record applied is stamped with it
   * (`observed_at`), and liveness deadlines count from that stamp alone. The composition root
   * passes the clock the evictor uses; the default (the wall clock) serves views that never
   * feed an evictor.
   */
  constructor(private readonly clock: Clock = { now: () => Date.now() }) {
    this.listeners.push(this.namedSchemas);
  }

  addListener(listener: AgentListener): void {
    this.listeners.push(listener);
    for (const a of this.agents.values()) listener.update(a.agent_type, a);
  }

  onUnreadable(listener: UnreadableListener): void {
    this.unreadableListeners.push(listener);
  }

  /** Counts an entry the view skipped and tells the listeners; for the feed too, when applying one threw. */
  reportUnreadable(key: string, revision: number, problem: string): void {
    this.unreadable++;
    for (const l of this.unreadableListeners) l(key, revision, problem);
  }

  get(agentType: string): AgentState | undefined {
    return this.agents.get(agentType);
  }

  all(): IterableIterator<AgentState> {
    return this.agents.values();
  }

  /** Live instances of known agent types with this status; kept as entries apply, O(1). */
  instanceCount(status: InstanceStatus): number {
    return this.tally.count(status);
  }

  /** Live instances of known agent types that can expire (the static entries aside); O(1). */
  expiringInstanceCount(): number {
    return this.tally.expiring();
  }

  get size(): number {
    return this.agents.size;
  }

  /** Capability and subject -> agent types, whatever their status; the query index reads it too. */
  get capabilityIndex(): CapabilityLookup {
    return this.index;
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

  /** Agent types of a tenant (null: the shared agents), whatever their status. */
  typesOfTenant(tenant: string | null): number {
    return this.index.typesOfTenant(tenant);
  }

  /** Every capability name, sorted (kept until a spec changes); do not mutate. */
  sortedCapabilityNames(): readonly string[] {
    return this.index.sortedCapabilityNames();
  }

  instance(agentType: string, instanceId: string): InstanceState | undefined {
    return this.table.instance(agentType, instanceId);
  }

  /**
   * Memory liveness: this replica answered the instance's heartbeat without a write, or a peer
   * said it did (service/liveness/heard-fanout.ts). `at` is on this replica's clock. Only moves a
   * deadline later, so the evictor need not be told. False when the view holds no such live
   * instance (a peer's entry for one this replica has not applied yet is dropped: applying its
   * registration will count as hearing it).
   */
  heard(agentType: string, instanceId: string, at: number, activeTasks: number | undefined): boolean {
    const live = this.instance(agentType, instanceId);
    if (live === undefined) return false;
    this.heardInstance(live, at, activeTasks);
    return true;
  }

  /**
   * `heard` for an instance the caller has just read from this view (the heartbeat path has it
   * in hand, and a second map lookup per heartbeat is a cost at a million instances).
   */
  heardInstance(instance: InstanceState, at: number, activeTasks: number | undefined): void {
    const live = instance as Mutable<InstanceState>;
    if (at > live.observed_at) live.observed_at = at;
    if (at > live.last_heartbeat && live.instance_id !== STATIC_INSTANCE_ID) live.last_heartbeat = at;
    if (activeTasks !== undefined) live.active_tasks = activeTasks;
  }

  /** Tombstones (instances that left) of an agent type, for the retention sweep. */
  tombstones(agentType: string): ReadonlyMap<string, Tombstone> {
    return this.table.tombstones(agentType);
  }

  /**
   * Agent types with tombstones but no agent record. The retention sweep finds them through
   * retentionCandidates(); this is what the view's tests read to see that none is left behind.
   */
  orphanTombstoneTypes(): IterableIterator<string> {
    return this.table.orphanTombstones.keys();
  }

  /** Agent types the retention sweep may find something to remove of (AgentTable.retentionCandidates). */
  retentionCandidates(): Generator<string> {
    return this.table.retentionCandidates();
  }

  /** The stored records of an agent and one of its instances as this view last saw them. */
  current(agentType: string, instanceId: string | null): Current {
    return this.table.current(agentType, instanceId);
  }

  /** The size of a key's value in the bucket as this view estimates it (AgentTable.storedOf). */
  storedOf(agentType: string, instanceId: string | null): number {
    return this.table.storedOf(agentType, instanceId);
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
    this.table.clear();
    this.schemas.clear();
    this.index.clear();
    this.claims.clear();
    this.trustRoots.clear();
    this.tally.clear();
    this.bytes.clear();
    this.dependents.clear();
    this.revision = 0;
    for (const t of types) this.notify(t, undefined);
    this.namedSchemas.clear();
  }

  /**
   * From now on entries are history (a replica's initial load): no events are derived, since
   * nobody would publish them, and each agent type's status and listeners (the query indexes)
   * are updated once at endQuietLoad rather than at every instance entry. Loading 100,000
   * instances of 10,000 types spent about a fifth of its time deriving events it threw away and
   * re-indexing each type once per instance (docs/performance.md). Nothing may be served from
   * the view before endQuietLoad.
   */
  beginQuietLoad(): void {
    this.quiet ??= new Set();
  }

  /** Ends a quiet load: each agent type it touched gets its status and one listener update. */
  endQuietLoad(): void {
    const touched = this.quiet;
    this.quiet = null;
    if (touched === null) return;
    for (const agentType of touched) {
      const agent = this.agents.get(agentType);
      try {
        if (agent) this.refreshStatus(agent);
        this.notify(agentType, agent);
      } catch (e) {
        // As the feed does for an entry whose apply threw: one agent type must not keep the
        // others out of the indexes, nor the replica from becoming ready.
        this.reportUnreadable(agentKey(agentType), agent?.revision ?? this.revision, `applying it failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  /** See InstanceChanges.take: lower bounds of the live instances written since the last call. */
  takeInstanceChanges(): InstanceChangeSummary | null {
    return this.changes.take();
  }

  /** Keep the live instances written between two takeInstanceChanges, up to `limit` of them. */
  trackInstanceChanges(limit: number): void {
    this.changes.track(limit);
  }

  /** Records a revision that carries no agent data (a reserved key), so min_revision waits see it. */
  noteRevision(revision: number): void {
    if (revision > this.revision) this.revision = revision;
  }

  /**
   * Applies an older value of a key without deriving events or moving the revision: how the
   * view is rebuilt as of an earlier revision before writes after it are replayed (event recovery).
   */
  seed(entry: StoreEntry): void {
    const revision = this.revision;
    this.revision = entry.revision - 1;
    this.apply(entry);
    this.revision = revision;
  }

  /** `key`: the entry's key, when the caller has already parsed it (the feed has). */
  apply(entry: StoreEntry, key: ParsedKey = parseKey(entry.key)): readonly StoreEvent[] {
    if (entry.revision <= this.revision) return [];
    this.revision = entry.revision;
    if (entry.operation === "PUT" && key.kind !== "reserved") {
      // Nothing of a key that breaks the token rules ever entered the view, so there is nothing to remove.
      const problem =
        key.kind === "unknown"
          ? "key: not agents.<agent_type>, instances.<agent_type>.<instance_id> or schemas.<name>.<version>"
          : key.kind === "schema"
            ? undefined
            : checkKeyTokens(key.agentType, key.kind === "instance" ? key.instanceId : undefined);
      if (problem !== undefined) {
        this.reportUnreadable(entry.key, entry.revision, problem);
        return [];
      }
    }
    let events: DerivedEvent[] = [];
    if (key.kind === "agent") events = this.applyAgent(key.agentType, entry);
    else if (key.kind === "instance") events = this.applyInstance(key.agentType, key.instanceId, entry);
    else if (key.kind === "reserved" && isSubjectClaimKey(entry.key)) this.claims.apply(entry);
    else if (key.kind === "reserved" && isTrustRootsKey(entry.key)) events = this.trustRoots.apply(entry, (problem) => this.reportUnreadable(entry.key, entry.revision, problem));
    else if (key.kind === "schema") {
      const problem = this.namedSchemas.apply(key.name, key.version, entry);
      if (problem !== undefined) this.reportUnreadable(entry.key, entry.revision, problem);
    }
    // The events are this call's own objects: completing them in place, rather than spreading
    // each into a new one (1.6 µs each), took 0.2 s off loading 100,000 instances (docs/performance.md).
    if (events.length === 0) return NO_EVENTS;
    return events.map((e, index) => Object.assign(e, { revision: entry.revision, index, time: entry.created }));
  }

  private applyAgent(agentType: string, entry: StoreEntry): DerivedEvent[] {
    const existing = this.agents.get(agentType);
    const before = readyCapabilities(existing);
    const record = entry.operation === "PUT" ? readAgentRecord(entry.value, agentType) : null;
    if (typeof record === "string") this.reportUnreadable(entry.key, entry.revision, record);
    const readable = record === null || typeof record === "string" ? null : record;
    // Dependencies on this type (or on a capability of its old or new spec) may change state.
    const watch =
      this.dependents.size === 0 || this.quiet !== null
        ? undefined
        : watchDependencies(this, this.dependents, agentType, [...(existing?.caps.keys() ?? []), ...(readable?.spec.capabilities.map((c) => c.name) ?? [])]);
    const events = this.applyAgentRecord(agentType, entry, existing, readable, before);
    return watch ? events.concat(dependencyChanges(this, watch, entry.revision)) : events;
  }

  private applyAgentRecord(agentType: string, entry: StoreEntry, existing: MutableAgent | undefined, record: AgentRecord | null, before: ReturnType<typeof readyCapabilities>): DerivedEvent[] {
    if (record === null) {
      if (!existing) return [];
      // The spec's bytes go; its instances' stay with the type (their keys are still there), no tenant's until a spec names one.
      this.bytes.add(existing.agent_type, existing.spec.tenant_scope, -existing.stored);
      this.bytes.moveType(existing.agent_type, existing.spec.tenant_scope, undefined);
      this.dependents.set(agentType, undefined);
      this.agents.delete(agentType);
      this.schemas.gone(agentType);
      this.index.remove(agentType, existing.spec);
      this.tally.removedAll(existing.instances.values());
      // Its instances' keys are still in the store: kept as orphans, so a readable record that
      // comes back finds them, as when instances arrive before their agent record.
      if (existing.instances.size > 0) this.table.orphans.set(agentType, existing.instances);
      if (existing.gone.size > 0) this.table.orphanTombstones.set(agentType, existing.gone);
      if (this.deferred(agentType)) return [];
      this.notify(agentType, undefined);
      return capabilityChanges(agentType, before, readyCapabilities(undefined), entry.revision, this.ready);
    }
    this.schemas.changed(agentType);
    let agent: MutableAgent;
    const held = existing === undefined ? undefined : recordBefore(existing);
    const stored = valueBytes(entry.value.length, entry.key.length);
    if (existing) {
      this.index.remove(agentType, existing.spec);
      const tenantBefore = existing.spec.tenant_scope;
      this.bytes.add(existing.agent_type, tenantBefore, stored - existing.stored);
      this.bytes.moveType(existing.agent_type, tenantBefore, record.spec.tenant_scope);
      updateAgentState(existing, record, entry.revision, stored);
      agent = existing;
    } else {
      agent = newAgentState(agentType, record, entry.revision, stored, this.table.orphans.get(agentType) ?? new Map(), this.table.orphanTombstones.get(agentType) ?? new Map());
      // Its instances, counted for the type alone so far, now count for its tenant too.
      this.bytes.moveType(agent.agent_type, undefined, record.spec.tenant_scope);
      this.bytes.add(agent.agent_type, record.spec.tenant_scope, agent.stored);
      this.table.orphans.delete(agentType);
      this.table.orphanTombstones.delete(agentType);
      this.agents.set(agent.agent_type, agent);
      // Orphans become evictable, and counted, only now.
      for (const i of agent.instances.values()) this.changes.note(i);
      this.tally.addedAll(agent.instances.values());
    }
    this.index.add(agentType, agent.spec);
    this.dependents.set(agentType, agent.spec.depends);
    if (this.deferred(agentType)) return [];
    this.refreshStatus(agent);
    this.notify(agentType, agent);
    const changes = capabilityChanges(agentType, before, readyCapabilities(agent), entry.revision, this.ready);
    return [...recordEvents(agent.agent_type, held, record, entry.revision), ...changes];
  }

  private applyInstance(agentType: string, instanceId: string, entry: StoreEntry): DerivedEvent[] {
    const agent = this.agents.get(agentType);
    const read = entry.operation === "PUT" ? readInstanceRecord(entry.value) : null;
    // An unreadable record is applied as a delete of the key: the instance is no longer known.
    if (typeof read === "string") this.reportUnreadable(entry.key, entry.revision, read);
    const record = typeof read === "string" ? null : read;
    // A removal for an agent type the view holds nothing of changes nothing (and leaves no empty maps behind).
    if (!agent && record === null && !this.table.hasOrphans(agentType)) return [];
    const { instances, gone } = this.table.instancesOf(agentType, agent);
    const previous = instances.get(instanceId);
    const before = readyCapabilities(agent);
    const events: DerivedEvent[] = [];
    // The key's value in the bucket (stored-bytes.ts); a delete, or a record that cannot be read, forgets the key.
    const storedBefore = previous?.stored ?? (gone.size > 0 ? (gone.get(instanceId)?.stored ?? NOTHING_STORED) : NOTHING_STORED);
    const stored =
      record === null ? NOTHING_STORED : record.kind === "gone" ? tombstoneBytes(storedBefore, entry.value.length, entry.key.length) : valueBytes(entry.value.length, entry.key.length);
    // Only an instance arriving, leaving, or changing status or version can change whether a
    // dependency on its agent type is live; a plain heartbeat skips the lookup.
    const live = record?.kind === "instance" ? record : null;
    const quiet = this.quiet !== null;
    const watch =
      agent && !quiet && (previous === undefined ? live !== null : live === null || live.status !== previous.status || live.version !== previous.version)
        ? watchDependencies(this, this.dependents, agentType, agent.caps.keys())
        : undefined;

    if (record && record.kind === "instance") {
      const statusBefore = previous?.status;
      // Built whole when new, updated in place when heard before (see the two functions below).
      const now = this.clock.now();
      let next: Mutable<InstanceState>;
      if (previous === undefined) {
        next = newInstanceState(agent?.agent_type ?? agentType, instanceId, record, entry.revision, now, stored);
        instances.set(next.instance_id, next);
      } else {
        next = previous as Mutable<InstanceState>;
        updateInstanceState(next, record, entry.revision, now, stored);
      }
      this.changes.note(next);
      // Most types have no tombstones: a delete on an empty map still cost a lookup per entry.
      if (gone.size > 0) gone.delete(instanceId);
      if (agent) {
        if (statusBefore === undefined) this.tally.added(next);
        else this.tally.moved(statusBefore, next.status);
        // A live instance registering again yields no event of its own, except when it
        // overwrote its version's spec: that must show in the stored history (PROTOCOL.md section 9).
        // In a quiet load (history) no event is derived.
        if (!quiet && (!previous || record.replaced === true)) {
          events.push(registeredEvent(agentType, agent.spec, instanceId, record, !previous && instances.size === 1, !previous, entry.revision));
        }
        if (!quiet && statusBefore !== undefined && statusBefore !== next.status) {
          events.push(statusChangedEvent(agentType, instanceId, statusBefore, next.status, entry.revision));
        }
      }
    } else {
      // A tombstone (the instance left, with its reason) or a DEL/PURGE of the key.
      if (record && record.kind === "gone") {
        gone.set(instanceId, { at: record.at, reason: record.reason, revision: entry.revision, stored });
        this.table.retained.add(agentType);
      } else gone.delete(instanceId);
      if (previous) {
        instances.delete(instanceId);
        if (agent) {
          this.tally.removed(previous);
          agent.left_at = Math.max(agent.left_at, record && record.kind === "gone" ? record.at : entry.created);
          if (!quiet) events.push(deregisteredEvent(agentType, instanceId, previous, record && record.kind === "gone" ? record.reason : RemovalReason.Operator, instances.size === 0, entry.revision));
        }
      }
    }
    const grown = stored - storedBefore;
    // A heartbeat of the same size as the record before changes nothing: no map touched.
    if (grown !== 0) this.bytes.add(agent?.agent_type ?? detached(agentType), agent === undefined ? undefined : agent.spec.tenant_scope, grown);
    if (!agent) {
      this.table.pruneOrphans(agentType, instances, gone);
      return [];
    }
    if (this.deferred(agentType)) return [];
    const statusBefore = agent.status;
    this.refreshStatus(agent);
    if (events.length > 0 || statusBefore !== agent.status) this.notify(agentType, agent);
    const changes = events.concat(capabilityChanges(agentType, before, readyCapabilities(agent), entry.revision, this.ready));
    return watch ? changes.concat(dependencyChanges(this, watch, entry.revision)) : changes;
  }

  private refreshStatus(agent: MutableAgent): void {
    agent.status = aggregateStatus(agent.instances.values());
    if (agent.status !== AgentStatus.Deregistered) agent.deregistered_at = null;
    else {
      this.table.retained.add(agent.agent_type);
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
    for (const t of this.providersOf(capability)) {
      const agent = this.agents.get(t);
      if (agent?.status === AgentStatus.Ready && isRoutable(agent)) out.push(t);
    }
    return out.sort();
  }

  /** During a quiet load: notes the agent type for endQuietLoad and says so. */
  private deferred(agentType: string): boolean {
    if (this.quiet === null) return false;
    this.quiet.add(agentType);
    return true;
  }

  private notify(agentType: string, agent: AgentState | undefined): void {
    for (const l of this.listeners) l.update(agentType, agent);
  }
}
