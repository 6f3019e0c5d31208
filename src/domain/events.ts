/**
 * Registry events (PROTOCOL.md section 5) as derived from store transitions. Every replica
 * derives the same events from the same change log, and an event's id is built from the
 * store revision that caused it, so whichever replica publishes, the stream deduplicates.
 */
import type { RemovalReason } from "./records.js";
import type { InstanceStatus } from "./model.js";

export type RegisteredData = {
  agent_type: string;
  version: string;
  instance_id: string;
  tenant_scope: string | null;
  first_instance: boolean;
  spec_changed: boolean;
  revision: number;
};
export type DeregisteredData = {
  agent_type: string;
  instance_id: string;
  reason: RemovalReason;
  agent_removed: boolean;
  last_heartbeat: string;
  revision: number;
};
export type StatusChangedData = { agent_type: string; instance_id: string; from: InstanceStatus; to: InstanceStatus; revision: number };
export type CapabilityChange = "added" | "removed" | "updated";
export type CapabilityChangedData = { capability: string; change: CapabilityChange; providers: string[]; revision: number };
export type SelfPreservationData = { active: boolean; overdue: number; live: number; ratio: number; threshold: number };

/** A derived event before it gets its envelope; `subject` is the agent_type or capability. */
export type RegistryEvent =
  | { type: "registry.agent.registered"; subject: string; data: RegisteredData }
  | { type: "registry.agent.deregistered"; subject: string; data: DeregisteredData }
  | { type: "registry.agent.status_changed"; subject: string; data: StatusChangedData }
  | { type: "registry.capability.changed"; subject: string; data: CapabilityChangedData };

/** An event bound to the store revision that caused it: `${revision}-${index}` is its id. */
export type StoreEvent = RegistryEvent & { revision: number; index: number; time: number };

export type CloudEvent<T = unknown> = {
  specversion: "1.0";
  id: string;
  source: "agent-registry";
  type: string;
  time: string;
  subject: string;
  datacontenttype: "application/json";
  data: T;
};

export const eventId = (revision: number, index: number): string => `${revision}-${index}`;

export function toCloudEvent<T>(type: string, id: string, subject: string, data: T, time: number): CloudEvent<T> {
  return {
    specversion: "1.0",
    id,
    source: "agent-registry",
    type,
    time: new Date(time).toISOString(),
    subject,
    datacontenttype: "application/json",
    data,
  };
}

export const storeEventToCloudEvent = (e: StoreEvent): CloudEvent =>
  toCloudEvent(e.type, eventId(e.revision, e.index), e.subject, e.data, e.time);
