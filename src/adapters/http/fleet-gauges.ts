/**
 * Keeps the fleet gauges (agents and instances by status) in step with the view. Agent types
 * are counted with a pass over them, so it runs on a timer rather than on every heartbeat;
 * instances come from the view's own tally (a pass over 100,000 of them held the event loop
 * for 10 ms). A pass that throws is logged, never fatal (issue 14).
 */
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../service/logger.js";
import { guarded, guardedInterval } from "../../service/guarded.js";
import type { RegistryMetrics } from "./metrics.js";
import type { Quotas } from "../../domain/lifecycle/quotas.js";

const STATUSES = ["registered", "ready", "draining", "deregistered"] as const;

export class FleetGauges {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly view: RegistryView,
    private readonly metrics: Pick<RegistryMetrics, "agents" | "instances" | "viewRevision" | "limitUsage">,
    private readonly quotas: Pick<Quotas, "maxInstancesPerType" | "maxTypesPerTenant">,
    private readonly log: Logger,
    private readonly intervalMs = 5000,
  ) {}

  start(): void {
    guarded(this.log, "fleet gauges", () => this.update())();
    this.timer = guardedInterval(this.log, "fleet gauges", () => this.update(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  update(): void {
    const agents: Record<string, number> = { registered: 0, ready: 0, draining: 0, deregistered: 0 };
    const typesByTenant = new Map<string, number>();
    let fullestType = 0;
    // A pass over agent types only: the instances are counted by the view as it applies them.
    for (const a of this.view.all()) {
      agents[a.status] = (agents[a.status] ?? 0) + 1;
      if (a.instances.size > fullestType) fullestType = a.instances.size;
      const tenant = a.spec.tenant_scope ?? "";
      typesByTenant.set(tenant, (typesByTenant.get(tenant) ?? 0) + 1);
    }
    this.metrics.limitUsage.set({ limit: "instances_per_type" }, fullestType / this.quotas.maxInstancesPerType);
    this.metrics.limitUsage.set({ limit: "types_per_tenant" }, Math.max(0, ...typesByTenant.values()) / this.quotas.maxTypesPerTenant);
    for (const s of STATUSES) {
      this.metrics.agents.set({ status: s }, agents[s] ?? 0);
      if (s !== "deregistered") this.metrics.instances.set({ status: s }, this.view.instanceCount(s));
    }
    this.metrics.viewRevision.set(this.view.revision);
  }
}
