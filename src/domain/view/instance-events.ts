/**
 * The payloads of the agent events an instance record's change causes (PROTOCOL.md section 5):
 * the view decides which transition happened, these say what the event carries.
 */
import { EventType } from "../../protocol/events.js";
import type { DerivedEvent } from "./events.js";
import type { InstanceState, InstanceStatus } from "../model/model.js";
import type { LiveInstanceRecord, RemovalReason } from "../model/records.js";
import type { AgentSpec } from "../spec/spec.js";

export function registeredEvent(
  agentType: string,
  spec: AgentSpec,
  instanceId: string,
  record: Pick<LiveInstanceRecord, "version" | "spec_changed" | "replaced" | "status">,
  firstInstance: boolean,
  newInstance: boolean,
  revision: number,
): DerivedEvent {
  return {
    type: EventType.AgentRegistered,
    subject: agentType,
    data: {
      agent_type: agentType,
      version: record.version,
      instance_id: instanceId,
      tenant_scope: spec.tenant_scope,
      first_instance: firstInstance,
      spec_changed: record.spec_changed,
      replaced: record.replaced === true,
      status: record.status,
      new_instance: newInstance,
      revision,
    },
  };
}

export function statusChangedEvent(agentType: string, instanceId: string, from: InstanceStatus, to: InstanceStatus, revision: number): DerivedEvent {
  return { type: EventType.AgentStatusChanged, subject: agentType, data: { agent_type: agentType, instance_id: instanceId, from, to, revision } };
}

/** `previous` is the instance as the view last held it: its last heartbeat goes in the event. */
export function deregisteredEvent(agentType: string, instanceId: string, previous: InstanceState, reason: RemovalReason, agentRemoved: boolean, revision: number): DerivedEvent {
  return {
    type: EventType.AgentDeregistered,
    subject: agentType,
    data: {
      agent_type: agentType,
      instance_id: instanceId,
      reason,
      agent_removed: agentRemoved,
      last_heartbeat: new Date(previous.last_heartbeat).toISOString(),
      status: previous.status,
      revision,
    },
  };
}
