/**
 * The bucket bytes each agent type and each tenant holds, estimated (stored-bytes.ts) and kept
 * as entries apply, so a registration's byte budget (domain/lifecycle/byte-budgets.ts) is two
 * map reads, never a pass over the fleet. A type's bytes are its spec's key, its instances'
 * keys and its tombstones'. A tenant's are those of its types (null: the shared agents); the
 * instances of a type whose spec the view does not hold yet count for the type alone until it
 * arrives and names the tenant. The sums are of one value per key; what they report is
 * `keptValues` times that, the values the bucket keeps of each key (stored-bytes.ts).
 */
export class ByteTally {
  /**
   * Values the bucket keeps per key (its history). Set once the bucket is open, before the
   * view loads; 1 until then, which is what a view that never meets a bucket needs.
   */
  keptValues = 1;

  private readonly types = new Map<string, number>();
  private readonly tenants = new Map<string | null, number>();

  /** Bytes the agent type's keys hold, every kept value counted. */
  ofType(agentType: string): number {
    return this.keptValues * (this.types.get(agentType) ?? 0);
  }

  /** Bytes the tenant's agent types' keys hold (null: the shared agents'), every kept value counted. */
  ofTenant(tenant: string | null): number {
    return this.keptValues * (this.tenants.get(tenant) ?? 0);
  }

  /** `delta`: of one value per key. `tenant` undefined: the type's spec is not known, so no tenant is charged. */
  add(agentType: string, tenant: string | null | undefined, delta: number): void {
    if (delta === 0) return;
    bump(this.types, agentType, delta);
    if (tenant !== undefined) bump(this.tenants, tenant, delta);
  }

  /** The type's bytes move to another tenant (its spec arrived, left, or changed tenant_scope). */
  moveType(agentType: string, from: string | null | undefined, to: string | null | undefined): void {
    if (from === to) return;
    const bytes = this.types.get(agentType) ?? 0;
    if (bytes === 0) return;
    if (from !== undefined) bump(this.tenants, from, -bytes);
    if (to !== undefined) bump(this.tenants, to, bytes);
  }

  clear(): void {
    this.types.clear();
    this.tenants.clear();
  }
}

function bump<K>(map: Map<K, number>, key: K, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  // No entry left at zero: a type or tenant that holds nothing costs nothing here.
  if (next <= 0) map.delete(key);
  else map.set(key, next);
}
