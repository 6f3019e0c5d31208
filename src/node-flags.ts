/**
 * The V8 flags the service is meant to run with, in one place: package.json's `start`, the
 * Dockerfile's entry point, the `#!` line of src/cli/main.ts and the benchmarks pass these, and `serve` warns when they are
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
 * --heap-growing-percent=60: after each full collection V8 lets the old generation grow to
 * its live size times a factor before the next. By default the factor follows how fast the GC
 * runs against how fast the program allocates, up to 4 x when the heap may reach 2 GB or more
 * (node's default on any machine with 8 GB). Both ends hurt the registry:
 *  - too high at 100,000 instances (90 MB live): the heap reserved 170-200 MB, and the Buffers
 *    only a full collection frees held malloc's heap at 72-75 MB: peak RSS 299-316 MB against
 *    the 300 MB target;
 *  - too low under lookups once the heap is past the 64 MB floor above: its GC being quick, V8
 *    picked 1.1-1.4 x, and the same mark-compact loop set in (29 in 10 s at 4,000 agent types,
 *    16 at 10,000): a lookup cost 14-16 us of CPU instead of 11.
 * A fixed 1.6 x avoids both: 231 MB peak at 100,000 instances, 2-3 mark-compacts in 10 s and
 * 11 us per lookup at 4,000 and 10,000 types (docs/performance.md, round 4). A cap on the heap
 * (--max-old-space-size=1024, which lowers V8's ceiling for the factor to 1.6 x) fixed the
 * memory too, but made the loop worse (41 and 21), and it is a hard limit a large fleet would
 * hit. A higher floor (--initial-old-space-size=128, with the cap) ended the loop up to 10,000
 * types, but a floor cannot help a heap that outgrows it.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--initial-old-space-size=64", "--heap-growing-percent=60"];

/** The flags of SERVICE_NODE_FLAGS this process was started without (by name: any value the operator chose counts). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env["NODE_OPTIONS"] ?? ""): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].map(flagName);
  return SERVICE_NODE_FLAGS.filter((f) => !given.includes(flagName(f)));
}

/** `--initial-old-space-size=64` and `--initial_old_space_size=128` name the same V8 flag. */
function flagName(arg: string): string {
  return arg.split("=")[0]!.replace(/_/g, "-");
}
