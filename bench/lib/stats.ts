/**
 * Latency samples and their percentiles. Every sample is kept (a few hundred thousand
 * doubles at most), so percentiles are exact rather than bucketed: the targets compare p99s
 * of runs made minutes apart, and bucket edges would blur a 1.5x ratio.
 */

export type Summary = {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
};

export class Recorder {
  private samples = new Float64Array(1024);
  private n = 0;

  get count(): number {
    return this.n;
  }

  add(value: number): void {
    if (this.n === this.samples.length) {
      const grown = new Float64Array(this.samples.length * 2);
      grown.set(this.samples);
      this.samples = grown;
    }
    this.samples[this.n++] = value;
  }

  reset(): void {
    this.n = 0;
  }

  summary(): Summary {
    return summarize(this.samples.subarray(0, this.n));
  }
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { count: 0, mean: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: n, mean: sum / n, p50: pick(sorted, 0.5), p90: pick(sorted, 0.9), p99: pick(sorted, 0.99), max: sorted[n - 1]! };
}

/** Nearest-rank percentile: the smallest sample with at least q of the samples at or below it. */
function pick(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const round = (v: number, digits = 2): number => Math.round(v * 10 ** digits) / 10 ** digits;
