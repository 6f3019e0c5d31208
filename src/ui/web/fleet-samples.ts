/**
 * The fleet summaries the chart strip sampled since the page opened (one every 2 s, two hours
 * kept): live instances and agent types by status, each sample's time and revision, and the
 * totals before the first one, rebuilt from the last hour's events (live-history.ts).
 */
import type { FleetSummary } from "../shared.js";
import type { ByStatus, LiveHistory, LivePoint } from "./live-history.js";

const HOUR_MS = 3_600_000;
/** Samples kept: two hours at one every 2 s. */
const MAX_SAMPLES = 3600;
export const INSTANCE_SERIES = ["ready", "registered", "draining", "late", "critical"] as const;
export const TYPE_SERIES = ["ready", "registered", "draining", "deregistered"] as const;

/** Live ones: ready, registered and draining (the first three series of each chart; late and critical are among them). */
export const liveAt = (series: number[][], i: number): number => (series[0]![i] ?? 0) + (series[1]![i] ?? 0) + (series[2]![i] ?? 0);

export class FleetSamples {
  /** Seconds, as uPlot's x axis wants them. */
  readonly at: number[] = [];
  readonly revisions: Array<number | null> = [];
  /** One series per INSTANCE_SERIES entry, one per TYPE_SERIES entry, aligned with `at`. */
  readonly instances: number[][] = INSTANCE_SERIES.map(() => []);
  readonly types: number[][] = TYPE_SERIES.map(() => []);

  add(s: FleetSummary): void {
    this.at.push(Date.parse(s.now) / 1000);
    this.revisions.push(typeof s.revision === "number" ? s.revision : null);
    INSTANCE_SERIES.forEach((k, i) => this.instances[i]!.push(k === "late" ? s.instances.late : k === "critical" ? s.instances.critical : (s.instances.by_status[k] ?? 0)));
    TYPE_SERIES.forEach((k, i) => this.types[i]!.push(s.agent_types[k] ?? 0));
    if (this.at.length > MAX_SAMPLES) {
      this.at.shift();
      this.revisions.shift();
      for (const a of [...this.instances, ...this.types]) a.shift();
    }
  }

  /** Live instances and agent types from an hour before the first sample up to it, rebuilt from events. */
  rebuiltBeforeOpen(history: LiveHistory): LivePoint[] {
    if (this.at.length === 0) return [];
    const first = this.at[0]! * 1000;
    const byStatus: ByStatus = { ready: this.instances[0]![0] ?? 0, registered: this.instances[1]![0] ?? 0, draining: this.instances[2]![0] ?? 0 };
    return history.before({ at: first, revision: this.revisions[0] ?? null }, { instances: liveAt(this.instances, 0), types: liveAt(this.types, 0), byStatus }, first - HOUR_MS);
  }
}
