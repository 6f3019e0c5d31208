/**
 * The wire contract (PROTOCOL.md) as pure data and types: subjects, query ops, event types,
 * id rules, request and reply bodies, error codes. Shared by the service, the SDK and the CLI;
 * it imports nothing else of src/ and no package, so a client loads nothing of the server.
 */
export { AGENT_TYPE_RE, CAPABILITY_MAX_LENGTH, CAPABILITY_RE, INSTANCE_ID_RE, NATS_SUBJECT_RE, QUEUE_GROUP_RE, RESERVED_SUBJECT_RE, SCHEMA_NAME_RE, SCHEMA_REF_RE, SCHEMA_VERSION_RE, TENANT_RE } from "./ids.js";
export { ERROR_CATALOGUE, ErrorCode, isErrorCode, SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER } from "./errors.js";
export type { ErrorBody, ErrorIssue } from "./errors.js";
export { AgentStatus, ApprovalState, InstanceStatus, RemovalReason, STATIC_INSTANCE_ID } from "./states.js";
export { CLOUD_EVENT_SOURCE, EVENT_TYPE_ROOT, EVENT_TYPES, EventType, STORED_EVENT_TYPES, toCloudEvent } from "./events.js";
export { DEFAULT_PREFIX, MIRROR_OPS, QUERY_OPS, SERVICE_NAME, SERVICE_QUEUE, subjects } from "./subjects.js";
export { MAX_WEIGHT, SUPPORTED_PATTERNS } from "./spec.js";
export { MAX_PAGE_LIMIT } from "./messages.js";
export type * from "./events.js";
export type * from "./messages.js";
export type * from "./spec.js";
export type { QueryOp, Subjects } from "./subjects.js";
