/**
 * The V8 flags the service is meant to run with, in one place: package.json's `start`, the
 * Dockerfile's entry point and the benchmarks pass these, and `serve` warns when they are
 * missing (tests check that every launch path carries them).
 *
 * --initial-old-space-size=64: V8 starts a full mark-compact whenever the old generation's
 * headroom (its allocation limit minus what it holds, Buffers included) is smaller than the
 * young generation, which grows to 2 x 16 MB while a view loads. With a small, steady heap
 * (20 MB at 1,000 agent types) V8 set the limit 24 MB above it, and the Buffers every NATS
 * reply allocates used that up between two scavenges: under a steady lookup load a
 * mark-compact followed every scavenge, five times a second, and the registry spent twice the
 * CPU per lookup. Whether a process fell into that state depended on its history, which is why
 * the same build measured 0.71 x or 0.89 x the baseline (docs/performance.md, round 3). Given
 * an initial old space, V8 never sets the limit below it, so a small heap keeps 40 MB of
 * headroom; a heap above 64 MB (a large fleet) is paced as before. (A smaller young
 * generation, --max-semi-space-size=8, also ended the mark-compacts, but made the heartbeat
 * p99 at 100,000 instances 11-14 ms instead of 9-10 ms.)
 *
 * --max-old-space-size=1024: V8 lets the old generation grow by up to 4 x its live size
 * between full collections when the heap may grow to 2 GB or more (node's default on any
 * machine with 8 GB of memory), and by at most 1.3-2 x below that (1.6 x at 1 GB). With
 * 100,000 instances (90 MB live) the default let the heap reserve 170-200 MB, and the Buffers
 * freed only by those rarer collections left malloc's heap at 72-75 MB: peak RSS 299-316 MB
 * against the 300 MB target. With the cap: 232-234 MB, GC time 0.8 % instead of 1.0 % of the
 * window, heartbeat p99 6.6 ms instead of 7.8 ms, cold start unchanged (docs/performance.md,
 * round 4). It is also a hard ceiling: a fleet whose heap nears 1 GB (about ten times the one
 * measured) needs a higher value, and a container's memory limit should sit above the cap plus
 * about 150 MB off the heap, or the cap below it (docs/operations.md, "Node flags").
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--initial-old-space-size=64", "--max-old-space-size=1024"];

/** The flags of SERVICE_NODE_FLAGS this process was started without (by name: any value the operator chose counts). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env["NODE_OPTIONS"] ?? ""): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map(flagName);
  return SERVICE_NODE_FLAGS.filter((f) => !given.includes(flagName(f)));
}

/** `--initial-old-space-size=64` and `--initial_old_space_size=128` name the same V8 flag. */
function flagName(arg: string): string {
  return arg.split("=")[0]!.replace(/_/g, "-");
}
