/**
 * Registrations, deregistrations and evictions per minute over the last hour, counted from the
 * stored events the page reads (no DOM here, so unit tests check the counting). An eviction is
 * a deregistration whose reason is `evicted`, counted in both series: the second says how many
 * of the first were not asked for.
 */
export const MINUTES = 60;
const MINUTE_MS = 60_000;

export type MinuteSeries = {
  /** Each minute's start, in seconds (uPlot's x unit), oldest first; the last is the current minute. */
  minutes: number[];
  registrations: number[];
  deregistrations: number[];
  evictions: number[];
};

export type CountedEvent = { type: string; time: string; data: Record<string, unknown> };

export class MinuteBuckets {
  /** Counts by minute start (ms). */
  readonly #counts = new Map<number, { registrations: number; deregistrations: number; evictions: number }>();

  add(e: CountedEvent): void {
    const at = Date.parse(e.time);
    if (!Number.isFinite(at)) return;
    const kind = e.type === "registry.agent.registered" ? "registrations" : e.type === "registry.agent.deregistered" ? "deregistrations" : null;
    if (kind === null) return;
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const c = this.#counts.get(minute) ?? { registrations: 0, deregistrations: 0, evictions: 0 };
    c[kind]++;
    if (kind === "deregistrations" && e.data["reason"] === "evicted") c.evictions++;
    this.#counts.set(minute, c);
  }

  /** The last MINUTES minutes up to `now` (ms); older counts are dropped, so memory stays bounded. */
  series(now: number): MinuteSeries {
    const last = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const first = last - (MINUTES - 1) * MINUTE_MS;
    for (const k of this.#counts.keys()) if (k < first) this.#counts.delete(k);
    const out: MinuteSeries = { minutes: [], registrations: [], deregistrations: [], evictions: [] };
    for (let m = first; m <= last; m += MINUTE_MS) {
      const c = this.#counts.get(m);
      out.minutes.push(m / 1000);
      out.registrations.push(c?.registrations ?? 0);
      out.deregistrations.push(c?.deregistrations ?? 0);
      out.evictions.push(c?.evictions ?? 0);
    }
    return out;
  }
}
