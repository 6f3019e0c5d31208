/**
 * Keeps the fleet gauges (agents and instances by status) in step with the view. Counting is
 * a pass over the view, so it runs on a timer rather than on every heartbeat.
 */
import type { RegistryView } from "../domain/view.js";
import type { RegistryMetrics } from "../adapters/http/metrics.js";

const STATUSES = ["registered", "ready", "draining", "deregistered"] as const;

export class FleetGauges {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly view: RegistryView,
    private readonly metrics: Pick<RegistryMetrics, "agents" | "instances" | "viewRevision">,
    private readonly intervalMs = 5000,
  ) {}

  start(): void {
    this.update();
    this.timer = setInterval(() => this.update(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  update(): void {
    const agents: Record<string, number> = { registered: 0, ready: 0, draining: 0, deregistered: 0 };
    const instances: Record<string, number> = { registered: 0, ready: 0, draining: 0 };
    for (const a of this.view.all()) {
      agents[a.status] = (agents[a.status] ?? 0) + 1;
      for (const i of a.instances.values()) instances[i.status] = (instances[i.status] ?? 0) + 1;
    }
    for (const s of STATUSES) {
      this.metrics.agents.set({ status: s }, agents[s] ?? 0);
      if (s !== "deregistered") this.metrics.instances.set({ status: s }, instances[s] ?? 0);
    }
    this.metrics.viewRevision.set(this.view.revision);
  }
}
