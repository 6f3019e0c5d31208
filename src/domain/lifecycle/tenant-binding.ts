/**
 * Which tenant a registration belongs to (docs/security.md, "Tenants"). NATS does not stamp a
 * message with its sender, so the subject says it, as it says the agent type: a register on
 * `<prefix>.tenant.<t>.register.<type>` is tenant t's whatever its body says, and one on the
 * plain `<prefix>.register.<type>` is a shared agent's. Per-user NATS permissions then decide
 * who may publish on which tenant's subjects, and no body can widen that.
 */
import { conflict, invalidRequest } from "../errors.js";
import { isPlainObject } from "../spec/spec.js";

/**
 * What the plain register subject does with a spec naming a tenant: `refuse` it (the default:
 * only a tenant's subject can put an agent in a tenant), or `allow` it as before v1.2, for a
 * deployment moving its tenants' agents to their subjects (REGISTRY_PLAIN_TENANT_SCOPE).
 */
export type PlainTenantScope = "refuse" | "allow";

/**
 * The register body with the subject's tenant bound into it: `tenant_scope` (inside `spec`, or
 * beside a card or a tool spec) filled in when absent or null, refused with `invalid_request`
 * when it names another tenant, or, on the plain subject (`tenant` null), when it names any
 * tenant unless `plain` allows it. A value of the wrong type is left for the spec's validation
 * to name. Done before the body is read or remembered, so a body's digest covers its tenant.
 */
export function bindRegisterBody<T extends Readonly<Record<string, unknown>>>(body: T, tenant: string | null, plain: PlainTenantScope): T {
  const inSpec = body["spec"] !== undefined;
  const holder = inSpec ? body["spec"] : body;
  // A spec that is not an object is refused by the spec's validation.
  if (!isPlainObject(holder)) return body;
  const path = inSpec ? "spec.tenant_scope" : "tenant_scope";
  const given = holder["tenant_scope"];
  if (typeof given === "string") {
    if (tenant === null) {
      if (plain === "allow") return body;
      throw invalidRequest(
        `${path} ${JSON.stringify(given)} is not taken on the shared register subject: a tenant's agent registers on tenant.${given}.register.<agent_type> under the registry's prefix`,
        [{ path, message: "must be absent or null on the shared register subject; use the tenant's register subject" }],
      );
    }
    if (given !== tenant) {
      throw invalidRequest(`${path} ${JSON.stringify(given)} does not match the subject's tenant ${tenant}`, [{ path, message: `must be ${tenant} (the subject's tenant) or absent` }]);
    }
    return body;
  }
  if (tenant === null || (given !== undefined && given !== null)) return body;
  const filled = { ...holder, tenant_scope: tenant };
  return (inSpec ? { ...body, spec: filled } : filled) as T;
}

/**
 * An agent type stays in the scope it was stored with (a tenant's, or shared) for as long as
 * its record is kept, retention included: a registration naming another scope would move the
 * type, its subject claim and its live instances out of the tenant whose users own it. The
 * other scope is not named (it may be another tenant's).
 */
export function checkTypeScope(agentType: string, stored: string | null, registering: string | null): void {
  if (stored === registering) return;
  throw conflict(
    `agent type ${agentType} is registered with another tenant_scope; an agent type keeps its tenant (or stays shared) until it is removed after the retention period: register the agent under another agent type`,
  );
}
