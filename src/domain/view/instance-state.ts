/**
 * An instance as the view keeps it, from its stored record: built whole when first heard, then
 * updated in place. Both are on the path of every heartbeat a replica applies (a million
 * instances on one machine), so each is written for the engine's sake; the comments say how.
 */
import type { LiveInstanceRecord } from "../model/records.js";
import type { InstanceState, Mutable } from "../model/model.js";
import { detached, hasKeys, NO_METADATA, sharedStatus } from "./memory.js";

/**
 * A newly heard instance, as the view keeps it. Its agent's string, not the one cut from the
 * entry's key, which would keep the whole key alive (the caller passes the agent's).
 */
export function newInstanceState(agentType: string, instanceId: string, record: LiveInstanceRecord, revision: number, now: number, stored: number): Mutable<InstanceState> {
  // Built whole, every field in the order the update below keeps: a literal of two
  // fields grown one by one moved through a dozen hidden classes and reallocated its
  // property store on the way, most of what applying an instance cost in a load of a
  // million (docs/performance.md). A register or heartbeat reached this replica now, on
  // its own clock, never on the stamp of the replica that took it (issue 14), and even
  // a marked record is a first hearing for this view.
  return {
    agent_type: agentType,
    instance_id: detached(instanceId),
    version: record.version,
    status: sharedStatus(record.status),
    registered_at: record.registered_at,
    last_heartbeat: record.last_heartbeat,
    heartbeat_interval_ms: record.heartbeat_interval_ms,
    active_tasks: record.active_tasks,
    metadata: hasKeys(record.metadata) ? record.metadata : NO_METADATA,
    revision,
    observed_at: now,
    suspect_since: record.suspect_since ?? null,
    mark_seen_at: record.suspect_since === undefined ? 0 : now,
    stored,
  };
}

/**
 * A heard instance updated in place: a new object per heartbeat (with its numbers and
 * strings) lived until the next heartbeat, so every one was promoted, the larger part of what
 * the old generation gained under 3,300 heartbeats a second (docs/performance.md). Whoever keeps
 * an instance across an await takes a copy (the evictor does).
 */
export function updateInstanceState(next: Mutable<InstanceState>, record: LiveInstanceRecord, revision: number, now: number, stored: number): void {
  const heardBefore = next.last_heartbeat;
  if (next.version !== record.version) next.version = record.version;
  next.status = sharedStatus(record.status);
  next.registered_at = record.registered_at;
  next.last_heartbeat = record.last_heartbeat;
  next.heartbeat_interval_ms = record.heartbeat_interval_ms;
  next.active_tasks = record.active_tasks;
  next.metadata = hasKeys(record.metadata) ? record.metadata : NO_METADATA;
  next.revision = revision;
  next.stored = stored;
  if (record.suspect_since === undefined) {
    // A write that leaves a mark out clears it, and is a hearing like any other. An
    // entry applied again (a resumed watch) never gets here: see apply().
    next.observed_at = now;
    next.suspect_since = null;
    next.mark_seen_at = 0;
  } else {
    // A suspect mark says the evictor did not hear the instance: it must not count as
    // hearing it here. Its last heartbeat as this replica heard it may be newer than the
    // evictor's copy.
    if (heardBefore > record.last_heartbeat) next.last_heartbeat = heardBefore;
    if (next.suspect_since !== record.suspect_since) {
      next.suspect_since = record.suspect_since;
      next.mark_seen_at = now;
    }
  }
}
