/**
 * Registry events (PROTOCOL.md section 5) as derived from store transitions. Every replica
 * derives the same events from the same change log, and an event's id is built from the
 * store revision that caused it, so whichever replica publishes, the stream deduplicates.
 * The event names, their data and the envelope are the wire contract's (src/protocol).
 */
import { toCloudEvent, type CloudEvent, type EventData } from "../../protocol/events.js";

export type {
  CapabilityChange,
  CapabilityChangedData,
  CloudEvent,
  DependencyChangedData,
  DeregisteredData,
  RegisteredData,
  SelfPreservationData,
  StatusChangedData,
} from "../../protocol/events.js";
export { toCloudEvent };

/** The event types a store transition can cause. */
type DerivedType =
  | "registry.agent.registered"
  | "registry.agent.deregistered"
  | "registry.agent.status_changed"
  | "registry.capability.changed"
  | "registry.agent.dependency_lost"
  | "registry.agent.dependency_restored"
  | "registry.agent.pending"
  | "registry.agent.approved"
  | "registry.agent.rejected"
  | "registry.agent.trust_changed"
  | "registry.trust.roots_changed"
  | "registry.agent.deprecated"
  | "registry.agent.undeprecated";

/** A derived event before it gets its envelope; `subject` is the agent_type or capability. */
export type DerivedEvent = { [T in DerivedType]: { type: T; subject: string; data: EventData[T] } }[DerivedType];

/** An event bound to the store revision that caused it: `${revision}-${index}` is its id. */
export type StoreEvent = DerivedEvent & { revision: number; index: number; time: number };

export const eventId = (revision: number, index: number): string => `${revision}-${index}`;

export const storeEventToCloudEvent = (e: StoreEvent): CloudEvent =>
  toCloudEvent(e.type, eventId(e.revision, e.index), e.subject, e.data, e.time);
