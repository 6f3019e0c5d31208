/**
 * How many live instances of known agent types the view holds, by status, kept as the view
 * applies entries. The fleet gauges used to count them with a pass over every instance every
 * 5 s: at 100,000 instances that pass held the event loop for 9-13 ms each time, and the
 * heartbeats that arrived meanwhile waited (the fleet benchmark's p99, issue 14). Instances
 * of an agent type whose record is not known (orphans) are not counted, as the pass did not.
 */
import { InstanceStatus, STATIC_INSTANCE_ID, type InstanceState } from "../model/model.js";

type Counted = Pick<InstanceState, "status" | "instance_id">;

export class InstanceTally {
  private readonly counts = new Map<InstanceStatus, number>(Object.values(InstanceStatus).map((s) => [s, 0]));
  /** The static entries among them (file-fleet agents), which never expire. */
  private statics = 0;

  added(i: Counted): void {
    this.counts.set(i.status, (this.counts.get(i.status) ?? 0) + 1);
    if (i.instance_id === STATIC_INSTANCE_ID) this.statics++;
  }

  removed(i: Counted): void {
    this.counts.set(i.status, (this.counts.get(i.status) ?? 0) - 1);
    if (i.instance_id === STATIC_INSTANCE_ID) this.statics--;
  }

  /** The same instance with another status. */
  moved(from: InstanceStatus, to: InstanceStatus): void {
    if (from === to) return;
    this.counts.set(from, (this.counts.get(from) ?? 0) - 1);
    this.counts.set(to, (this.counts.get(to) ?? 0) + 1);
  }

  addedAll(instances: Iterable<Counted>): void {
    for (const i of instances) this.added(i);
  }

  removedAll(instances: Iterable<Counted>): void {
    for (const i of instances) this.removed(i);
  }

  clear(): void {
    for (const s of this.counts.keys()) this.counts.set(s, 0);
    this.statics = 0;
  }

  /** Live instances with this status. */
  count(status: InstanceStatus): number {
    return this.counts.get(status) ?? 0;
  }

  /**
   * Live instances that can expire: all but the static entries. Self-preservation's share is
   * of these; counting the static ones by a loop over every agent type cost a loop per tick
   * during an outage at 10,000 types.
   */
  expiring(): number {
    let n = -this.statics;
    for (const c of this.counts.values()) n += c;
    return n;
  }
}
