/**
 * Closed-loop request load: `concurrency` requests always in flight, each one sent as soon
 * as the previous one of its lane is answered, for a fixed time. Throughput is what the
 * system under test sustains at that depth; latency is measured per request.
 */
import { Recorder, round, type Summary } from "../stats.js";

export type LoopResult = { count: number; errors: number; seconds: number; rps: number; latencyMs: Summary; firstError?: string | undefined };

/** `send` resolves to null on success or an error text; it must not throw. */
export async function closedLoop(concurrency: number, durationMs: number, send: () => Promise<string | null>): Promise<LoopResult> {
  const latency = new Recorder();
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + durationMs;
  const lane = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const error = await send();
      latency.add(performance.now() - t0);
      if (error !== null) {
        errors++;
        firstError ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - started) / 1000;
  const count = latency.count;
  return { count, errors, seconds: round(seconds), rps: round(count / seconds, 1), latencyMs: roundSummary(latency.summary()), firstError };
}

export function roundSummary(s: Summary): Summary {
  return { count: s.count, mean: round(s.mean, 3), p50: round(s.p50, 3), p90: round(s.p90, 3), p99: round(s.p99, 3), max: round(s.max, 3) };
}
