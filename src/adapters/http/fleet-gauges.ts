/**
 * Keeps the fleet gauges (agents and instances by status, the fullest limits) in step with the
 * view, on a timer. Nothing here passes over the fleet: instances come from the view's own
 * tally (a pass over 100,000 of them held the event loop for 10 ms), agent types from an
 * AgentTally the view keeps up to date as a listener (a pass over 100,000 types held it for
 * about 60 ms). An update that throws is logged, never fatal (issue 14).
 */
import type { RegistryView } from "../../domain/view/view.js";
import type { Logger } from "../../kit/logger.js";
import { guarded, guardedInterval } from "../../kit/guarded.js";
import type { RegistryMetrics } from "./metrics.js";
import type { Quotas } from "../../domain/lifecycle/quotas.js";
import { AgentTally } from "../../domain/view/agent-tally.js";

const STATUSES = ["registered", "ready", "draining", "deregistered"] as const;

export class FleetGauges {
  private timer: NodeJS.Timeout | null = null;
  private readonly agents = new AgentTally();

  constructor(
    private readonly view: RegistryView,
    private readonly metrics: Pick<RegistryMetrics, "agents" | "instances" | "viewRevision" | "limitUsage">,
    private readonly quotas: Pick<Quotas, "maxInstancesPerType" | "maxTypesPerTenant">,
    private readonly log: Logger,
    private readonly intervalMs = 5000,
  ) {
    view.addListener(this.agents);
  }

  start(): void {
    guarded(this.log, "fleet gauges", () => this.update())();
    this.timer = guardedInterval(this.log, "fleet gauges", () => this.update(), this.intervalMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  update(): void {
    this.metrics.limitUsage.set({ limit: "instances_per_type" }, this.agents.mostInstancesInOneType() / this.quotas.maxInstancesPerType);
    this.metrics.limitUsage.set({ limit: "types_per_tenant" }, this.agents.mostTypesInOneTenant() / this.quotas.maxTypesPerTenant);
    for (const s of STATUSES) {
      this.metrics.agents.set({ status: s }, this.agents.count(s));
      if (s !== "deregistered") this.metrics.instances.set({ status: s }, this.view.instanceCount(s));
    }
    this.metrics.viewRevision.set(this.view.revision);
  }
}
