/**
 * What a registration is checked against before anything is written, apart from its spec
 * (spec-admission.ts) and its signature (trust-gate.ts): the instance's own terms, the
 * dependencies (no cycle), the count quotas and the byte budgets. Each reads the view and, near
 * a limit, first brings it up to the store (`catchUp`): a write is answered before this
 * replica's view has applied it.
 */
import { invalidRequest } from "../../domain/errors.js";
import { checkByteBudgets, nearByteBudget, type ByteBudgets, type ByteFacts } from "../../domain/lifecycle/byte-budgets.js";
import { checkQuotas, nearQuota, type RegistrationFacts } from "../../domain/lifecycle/quotas.js";
import { cycleRefusal, dependencyWarnings, findCycle } from "../../domain/graph/dependency-checks.js";
import type { RegisterMessage } from "../../domain/messages.js";
import { agentKey, instanceKey } from "../../domain/model/records.js";
import { InstanceStatus, STATIC_INSTANCE_ID } from "../../domain/model/model.js";
import { jsonBytes } from "../../domain/query/page.js";
import type { AgentSpec } from "../../domain/spec/spec.js";
import { valueBytes } from "../../domain/view/stored-bytes.js";
import type { RegistryView } from "../../domain/view/view.js";
import type { RegistrarDeps, RegistrarSettings } from "./registrar.js";
import { newInstanceId } from "./instance-id.js";

export type InstanceTerms = { instanceId: string; interval: number; status: InstanceStatus; metadata: Record<string, string> };

/** The instance's id, heartbeat interval (clamped, with a warning), status and metadata. */
export function instanceTerms(msg: RegisterMessage, isStatic: boolean, settings: RegistrarSettings, warnings: string[]): InstanceTerms {
  const instanceId = isStatic ? STATIC_INSTANCE_ID : (msg.instance_id ?? newInstanceId());
  if (!isStatic && instanceId === STATIC_INSTANCE_ID) {
    throw invalidRequest(`instance_id "${STATIC_INSTANCE_ID}" is reserved for registry-file entries`);
  }
  const requested = msg.heartbeat_interval_ms ?? settings.defaultHeartbeatIntervalMs;
  const interval = Math.min(settings.maxHeartbeatIntervalMs, Math.max(settings.minHeartbeatIntervalMs, requested));
  if (interval !== requested) warnings.push(`heartbeat_interval_ms ${requested} outside ${settings.minHeartbeatIntervalMs}..${settings.maxHeartbeatIntervalMs}; using ${interval}`);
  return { instanceId, interval, status: msg.status ?? InstanceStatus.Ready, metadata: msg.metadata ?? {} };
}

/**
 * The count quotas (domain/lifecycle/quotas.ts), counted from the view, which may not have
 * applied the writes just answered: near a limit, it first catches up with the store, so
 * registrations sent one after the other stop exactly at it. Far from one, a lag of a few
 * writes cannot matter.
 */
export async function checkCountQuotas(
  deps: Pick<RegistrarDeps, "settings" | "view">,
  spec: AgentSpec,
  instanceId: string,
  metadata: Readonly<Record<string, string>>,
  catchUp: () => Promise<void>,
): Promise<void> {
  const { view, settings } = deps;
  const agentType = spec.agent_type;
  const facts = (): RegistrationFacts => {
    const known = view.get(agentType);
    return {
      metadataBytes: jsonBytes(metadata),
      newInstance: view.instance(agentType, instanceId) === undefined,
      instancesOfType: known?.instances.size ?? 0,
      newType: known === undefined,
      typesOfTenant: view.typesOfTenant(spec.tenant_scope),
      agentType,
      tenant: spec.tenant_scope,
    };
  };
  let counted = facts();
  if (nearQuota(counted, settings)) {
    await catchUp();
    counted = facts();
  }
  checkQuotas(counted, settings);
}

/**
 * The byte budgets (domain/lifecycle/byte-budgets.ts), from the view's tally: each key this
 * registration writes is charged `history` copies of its new value, less what it holds already. A live instance registering again with no more metadata than it had adds
 * nothing: an agent that registers again on a reconnect is never refused for its own bytes,
 * as its heartbeats never are. Near a budget the view first catches up with the store.
 */
export async function checkByteBudgetsOf(
  deps: Pick<RegistrarDeps, "settings" | "view">,
  spec: AgentSpec,
  instanceId: string,
  metadata: Readonly<Record<string, string>>,
  agentValue: Uint8Array | null,
  instanceValue: Uint8Array,
  catchUp: () => Promise<void>,
): Promise<void> {
  const budgets: ByteBudgets = { typeMaxBytes: deps.settings.typeMaxBytes ?? 0, tenantMaxBytes: deps.settings.tenantMaxBytes ?? 0 };
  if (budgets.typeMaxBytes <= 0 && budgets.tenantMaxBytes <= 0) return;
  const { view } = deps;
  const agentType = spec.agent_type;
  const facts = (): ByteFacts => {
    const history = view.bytes.keptValues;
    const live = view.instance(agentType, instanceId);
    const again = live !== undefined && jsonBytes(metadata) <= jsonBytes(live.metadata);
    const instanceAdds = again ? 0 : history * (valueBytes(instanceValue.length, instanceKey(agentType, instanceId).length) - view.storedOf(agentType, instanceId));
    const specAdds = agentValue === null ? 0 : history * (valueBytes(agentValue.length, agentKey(agentType).length) - view.storedOf(agentType, null));
    return {
      agentType,
      tenant: spec.tenant_scope,
      typeBytes: view.bytes.ofType(agentType),
      tenantBytes: view.bytes.ofTenant(spec.tenant_scope),
      adding: Math.max(0, instanceAdds) + Math.max(0, specAdds),
    };
  };
  let counted = facts();
  if (nearByteBudget(counted, budgets)) {
    await catchUp();
    counted = facts();
  }
  checkByteBudgets(counted, budgets);
}

/**
 * A dependency closing a cycle is refused; one not live now is a warning (PROTOCOL.md
 * section 11.2). Read from the view, first brought up to the store's revision: a write is
 * answered once stored, before this replica's view has applied it, so a client registering
 * the two halves of a cycle one after the other would otherwise find the first half missing.
 * This check answers early and gives the warnings; registrations racing to close a cycle (on
 * one replica or several) are told apart when the spec is written, in its turn on the graph
 * key (dependency-guard.ts).
 */
export async function checkDependencies(view: RegistryView, spec: AgentSpec, catchUp: () => Promise<void>): Promise<string[]> {
  await catchUp();
  const cycle = findCycle(view, spec);
  if (cycle) throw cycleRefusal(cycle);
  return dependencyWarnings(view, spec.depends ?? [], spec.tenant_scope);
}
