/**
 * A Prometheus histogram whose series are bound once and then observed with no label work at
 * all: a bucket search and three additions. prom-client's own Histogram hashes the label set
 * on every observe, a bound child included (it only remembers the labels, not the series):
 * 3.4-4.7 µs a request on a 2-core VM, 12% of a core at the 33,000 heartbeats a second of a
 * million instances. The series are exported exactly as prom-client exports a histogram (the
 * same `_bucket` / `_sum` / `_count` lines, `le` first), through prom-client's Registry, which
 * takes any object with a name, a help, a type and `get()`.
 */
import type { Registry } from "prom-client";

/** One label set's counts; what `bind` returns observes into it. */
type Series<L extends string> = {
  readonly labels: Readonly<Record<L, string>>;
  /** Observations per bucket (not cumulative), the last one past every bound (+Inf). */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
};

type Exported = { labels: Record<string, string | number>; value: number; metricName: string };

export class BoundHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  private readonly labelNames: readonly L[];
  private readonly upperBounds: readonly number[];
  /** Keyed by the label values joined with NUL (no label value here holds one). */
  private readonly series = new Map<string, Series<L>>();

  constructor(opts: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[]; registers: readonly Registry[] }) {
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = opts.labelNames;
    this.upperBounds = [...opts.buckets].sort((a, b) => a - b);
    for (const registry of opts.registers) registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** The observer of one label set, to keep and call per observation; binding again gives the same series. */
  bind(labels: Readonly<Record<L, string>>): (value: number) => void {
    const key = this.labelNames.map((n) => labels[n]).join("\u0000");
    let series = this.series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, buckets: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    const s = series;
    const bounds = this.upperBounds;
    return (value) => {
      // A NaN or infinite duration is a clock bug upstream; it must not poison the sum.
      if (!Number.isFinite(value)) return;
      let b = 0;
      while (b < bounds.length && value > bounds[b]!) b++;
      s.buckets[b]!++;
      s.sum += value;
      s.count++;
    };
  }

  /** What prom-client's Registry formats: cumulative buckets with `le`, then `_sum` and `_count`. */
  async get(): Promise<{ name: string; help: string; type: "histogram"; aggregator: "sum"; values: Exported[] }> {
    const values: Exported[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { le: bound, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: "+Inf", ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** Zeroes every series; observers bound earlier keep counting into theirs. */
  reset(): void {
    for (const s of this.series.values()) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
