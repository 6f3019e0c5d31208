/**
 * The SDK that agents and coordinators import (`agent-registry/client`).
 */
export { connect, connectionOptions, connectOptionsFromEnv, DEFAULT_NATS_URL, type ConnectOptions } from "./connection.js";
export {
  ConflictError,
  decodeReply,
  ErrorCode,
  InternalError,
  InvalidRequestError,
  InvalidSpecError,
  InvalidCardError,
  LimitExceededError,
  isTransient,
  NoRouteError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  permissionDenied,
  RegistryClientError,
  RegistryTimeoutError,
  RegistryUnreachableError,
  StaleViewError,
  UnavailableError,
  UnknownInstanceError,
  type ErrorIssue,
} from "./errors.js";
export { DEFAULT_TIMEOUT_MS, RegistryClient, type RegistryClientOptions } from "./registry-client.js";
export { AgentReplyError, AgentRequestError, DEFAULT_CALL_TIMEOUT_MS, InvalidPayloadError, type CallOptions, type CallResult } from "./call.js";
export { CapabilityCache, createCapabilityCache, type CachedAnswer, type CapabilityCacheOptions } from "./capability-cache.js";
export { registerAgent, type AgentEvent, type AgentEventType, type AgentHandle, type RegisterAgentOptions } from "./agent.js";
export { installShutdownHandlers, type ShutdownOptions } from "./shutdown.js";
export { parseDuration, watchEvents, type WatchedEvent, type WatchEventsOptions } from "./events.js";
export type * from "./types.js";
