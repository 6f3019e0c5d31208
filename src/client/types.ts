/**
 * Request and reply shapes of PROTOCOL.md, as the SDK sees them on the wire (snake_case,
 * times as ISO 8601 strings). They are the wire contract's own types (src/protocol), which the
 * service builds its replies with, so the SDK and the service cannot disagree.
 */
export type * from "../protocol/messages.js";
export type {
  AgentKind,
  AgentSpec,
  AgentSpecInput,
  Capability,
  CapabilityInput,
  Dependency,
  DependencyType,
  JsonSchema,
  ModelProvider,
  ReflectionConfig,
  SupportedPattern,
  ToolAnnotations,
} from "../protocol/spec.js";
export type { AgentStatus, ApprovalState, InstanceStatus, RemovalReason } from "../protocol/states.js";
export type {
  AgentApprovedEvent,
  AgentDeregisteredEvent,
  AgentPendingEvent,
  AgentRejectedEvent,
  AgentTrustChangedEvent,
  AgentDeprecatedEvent,
  AgentUndeprecatedEvent,
  DeprecationData,
  TrustChangedData,
  TrustRootsChangedData,
  TrustRootsChangedEvent,
  TrustStateName,
  ApprovalData,
  AgentHeartbeatEvent,
  AgentRegisteredEvent,
  AgentStatusChangedEvent,
  AuditGapAlertEvent,
  CapabilityChangedEvent,
  CloudEvent,
  DependencyChangedData,
  DependencyLostEvent,
  DependencyRestoredEvent,
  DependencyState,
  EventType,
  RegistryEvent,
  SelfPreservationAlertEvent,
} from "../protocol/events.js";

/** Options every query accepts. */
export type QueryOptions = {
  /** Wait (up to 2 s, server side) until the replica has applied this store revision. */
  minRevision?: number;
  /** Overrides the client's request timeout for this call. */
  timeoutMs?: number;
};
