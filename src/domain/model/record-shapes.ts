/**
 * The shapes of the records in the bucket (records.ts), checked field by field when they are
 * read. A record of another shape (a bug, a hand edit, a newer registry) reached the indexes,
 * the lookup cache and the schema sharing as it was, and the first of them that iterated a
 * field which was not there killed the process from a timer, at every start (issue 14). Every
 * field the registry reads is checked for the type it reads it as; what a field may contain
 * beyond that (lengths, patterns, ranges) is the write path's rule, not the reader's.
 */
import semver from "semver";
import type { AgentSpec, Capability } from "../spec/spec.js";
import { AGENT_TYPE_RE, INSTANCE_ID_RE } from "../../protocol/ids.js";
import { AGENT_KINDS } from "../../protocol/spec.js";
import { ApprovalState, InstanceStatus, RemovalReason } from "../../protocol/states.js";
import type { AgentRecord, GoneInstanceRecord, LiveInstanceRecord } from "./record-types.js";
import type { Attestation } from "../trust/verify-signatures.js";
import type { Approval } from "../trust/approval-policy.js";
import type { KeptSignature, SignedEvidence } from "../trust/signed-evidence.js";
import type { TrustLapse } from "../trust/trust-lapse.js";
import type { Deprecation, Undeprecation } from "../trust/deprecation.js";
import {
  anyObject,
  arrayOf,
  boolean,
  either,
  nullable,
  number,
  objectOf,
  oneOf,
  optional,
  recordOf,
  string,
  type Check,
  type ShapeOf,
} from "./shape.js";

type Provider = NonNullable<AgentSpec["providers"]>[number];
type Dependency = NonNullable<AgentSpec["depends"]>[number];
type Reflection = NonNullable<AgentSpec["reflection_config"]>;

const strings = arrayOf(string);
const schema = either(anyObject, boolean);
/** Versions seen valid: a fleet has a few, and every heartbeat's record carries one. */
const validVersions = new Set<string>();
/** Semver is compared on the write path (semver.compare throws on anything else). */
const version: Check = (v) => {
  if (typeof v !== "string") return "not a string";
  if (validVersions.has(v)) return undefined;
  if (semver.valid(v) === null) return "not a semver version";
  if (validVersions.size >= 1000) validVersions.clear();
  validVersions.add(v);
  return undefined;
};

const capability: ShapeOf<Capability> = {
  name: string,
  description: string,
  input_schema: schema,
  output_schema: schema,
  confidence_hint: optional(number),
  tags: strings,
  examples: strings,
  title: optional(string),
  annotations: optional(anyObject),
  _meta: optional(anyObject),
  icons: optional(arrayOf(anyObject)),
  execution: optional(anyObject),
  mcp_extra: optional(anyObject),
};

const reflection: ShapeOf<Reflection> = { enabled: boolean, max_rounds: number, criteria: strings, model: string };

const provider: ShapeOf<Provider> = {
  id: string,
  models: strings,
  kind: string,
  capabilities: objectOf({ streaming: optional(boolean), tools: optional(boolean), vision: optional(boolean), jsonMode: optional(boolean) }),
  displayName: optional(string),
  description: optional(string),
};

const dependency: ShapeOf<Dependency> = { type: string, name: string, version: string, capability: optional(string) };

const spec: ShapeOf<AgentSpec> = {
  agent_type: string,
  version,
  description: string,
  owner_team: string,
  capabilities: arrayOf(objectOf(capability)),
  nats_subject: string,
  consumer_group: string,
  supported_patterns: strings,
  max_concurrent_tasks: number,
  task_timeout_ms: number,
  llm_timeout_ms: number,
  max_retries: number,
  reflection_config: nullable(objectOf(reflection)),
  evaluators: strings,
  tools: strings,
  tenant_scope: nullable(string),
  tags: recordOf(string),
  runtime: optional(string),
  acp_port: optional(number),
  url: optional(string),
  weight: number,
  providers: optional(arrayOf(objectOf(provider))),
  depends: optional(arrayOf(objectOf(dependency))),
  kind: oneOf(AGENT_KINDS),
  display_name: optional(string),
  representative_queries: optional(strings),
  a2a_card: optional(anyObject),
};

const attestation: ShapeOf<Attestation> = {
  verified: (v) => (v === true ? undefined : "not true"),
  kid: string,
  publisher: string,
  verified_at: number,
};

const approval: ShapeOf<Approval> = {
  state: oneOf(Object.values(ApprovalState)),
  by: optional(string),
  at: optional(number),
  reason: optional(string),
};

const keptSignature: ShapeOf<KeptSignature> = { protected: string, signature: string, header: optional(anyObject) };

const signedEvidence: ShapeOf<SignedEvidence> = {
  source: oneOf(["spec", "a2a_card", "mcp_toolspec", "mcp_server"]),
  payload: string,
  signatures: arrayOf(objectOf(keptSignature)),
};

const trustLapse: ShapeOf<TrustLapse> = {
  state: oneOf(["unverified", "withheld"]),
  reason: string,
  kid: nullable(string),
  at: number,
};

const deprecation: ShapeOf<Deprecation> = { by: string, at: number, reason: optional(string), successor: optional(string) };
const undeprecation: ShapeOf<Undeprecation> = { by: string, at: number, reason: optional(string) };

const agentRecord: ShapeOf<AgentRecord> = {
  kind: oneOf(["agent"]),
  spec: objectOf(spec),
  registered_at: number,
  updated_at: number,
  static: optional(boolean),
  trust: optional(objectOf(attestation)),
  approval: optional(objectOf(approval)),
  signed: optional(objectOf(signedEvidence)),
  trust_lapse: optional(objectOf(trustLapse)),
  deprecation: optional(objectOf(deprecation)),
  undeprecation: optional(objectOf(undeprecation)),
};

const liveInstance: ShapeOf<LiveInstanceRecord> = {
  kind: oneOf(["instance"]),
  version,
  status: oneOf(Object.values(InstanceStatus)),
  registered_at: number,
  last_heartbeat: number,
  heartbeat_interval_ms: number,
  active_tasks: number,
  metadata: recordOf(string),
  spec_changed: boolean,
  replaced: optional(boolean),
  suspect_since: optional(number),
};

const goneInstance: ShapeOf<GoneInstanceRecord> = {
  kind: oneOf(["gone"]),
  version: string,
  reason: oneOf(Object.values(RemovalReason)),
  at: number,
  registered_at: number,
  last_heartbeat: number,
};

export const checkAgentRecord = objectOf(agentRecord);
export const checkLiveInstance = objectOf(liveInstance);
export const checkGoneInstance = objectOf(goneInstance);

/** The tokens of a key, held to the protocol's rules: they become agent_type and instance_id in replies. */
export function checkKeyTokens(agentType: string, instanceId?: string): string | undefined {
  if (!AGENT_TYPE_RE.test(agentType)) return "key: agent type token breaks the agent_type rule";
  if (instanceId !== undefined && !INSTANCE_ID_RE.test(instanceId)) return "key: instance id token breaks the instance_id rule";
  return undefined;
}
