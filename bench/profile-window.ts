/**
 * Where one stretch of a V8 CPU profile went: self time by function between two offsets from
 * the profile's start, with the collector, idle and the program as V8 names them. For the
 * registry's profiles from `npm run bench -- --cpu-prof` (one file per thread, the load worker's
 * included), e.g. the start of fleet-1m:
 *
 *   node --import tsx bench/profile-window.ts bench/results/profiles/fleet-1m/CPU.*.cpuprofile --to 12.5
 *
 * Prints, per file, the stretch's length, the share of it each of the top functions took
 * (`--top`, 15 by default), and the share of groups that answer "where did the time go":
 * idle, garbage collection, nats.js, JSON, the registry's own code. `--by-second` prints
 * instead, for each second of the stretch, its milliseconds in the collector and idle: where a
 * latency spike's second went.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { parseArgs } from "node:util";

type CallFrame = { functionName: string; url: string; lineNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame };
type Profile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

/** Microseconds of self time per node id, for samples between `fromS` and `toS` seconds into the profile. */
function selfTime(p: Profile, fromS: number, toS: number): { byNode: Map<number, number>; totalUs: number } {
  const byNode = new Map<number, number>();
  let t = 0;
  let totalUs = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    // A sample's time is the gap to the next one, as Chrome DevTools counts it.
    const us = p.timeDeltas[i + 1] ?? 0;
    if (t < fromS * 1e6 || t >= toS * 1e6) continue;
    byNode.set(p.samples[i]!, (byNode.get(p.samples[i]!) ?? 0) + us);
    totalUs += us;
  }
  return { byNode, totalUs };
}

const where = (f: CallFrame): string => {
  const file = f.url === "" ? "" : ` ${f.url.replace(/^.*\/(node_modules\/|src\/|dist\/)/, "$1")}:${f.lineNumber + 1}`;
  return `${f.functionName || "(anonymous)"}${file}`;
};

/** The group a frame's self time counts under. */
function group(f: CallFrame): string {
  if (f.functionName === "(idle)") return "idle";
  if (f.functionName === "(garbage collector)") return "garbage collection";
  if (f.functionName === "(program)") return "V8 and native (program)";
  if (f.url.includes("@nats-io")) return "nats.js";
  if (f.functionName === "parse" && f.url === "") return "JSON.parse";
  if (f.url.includes("/src/") || f.url.includes("/dist/")) return "registry code";
  if (f.url.startsWith("node:")) return "Node.js";
  return "other";
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: "string", default: "0" }, to: { type: "string", default: "Infinity" }, top: { type: "string", default: "15" }, "by-second": { type: "boolean", default: false } },
});
if (positionals.length === 0) {
  process.stderr.write("usage: node --import tsx bench/profile-window.ts FILE.cpuprofile... [--from S] [--to S] [--top N] [--by-second]\n");
  process.exit(2);
}
const [from, to, top] = [Number(values.from), Number(values.to), Number(values.top)];
/** Each second of the stretch: its milliseconds in the collector and idle, in one pass over the samples. */
function bySecond(file: string, p: Profile, frames: Map<number, CallFrame>): void {
  const seconds = new Map<number, { gc: number; idle: number }>();
  let t = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    if (t < from * 1e6 || t >= to * 1e6) continue;
    const name = frames.get(p.samples[i]!)!.functionName;
    if (name !== "(garbage collector)" && name !== "(idle)") continue;
    const second = Math.floor(t / 1e6);
    const acc = seconds.get(second) ?? { gc: 0, idle: 0 };
    if (name === "(idle)") acc.idle += p.timeDeltas[i + 1] ?? 0;
    else acc.gc += p.timeDeltas[i + 1] ?? 0;
    seconds.set(second, acc);
  }
  process.stdout.write(`${basename(file)}: second, ms in garbage collection, ms idle\n`);
  for (const [second, { gc, idle }] of [...seconds].sort((a, b) => a[0] - b[0])) process.stdout.write(`${second}\t${Math.round(gc / 1000)}\t${Math.round(idle / 1000)}\n`);
}

for (const file of positionals) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  if (values["by-second"]) {
    bySecond(file, p, frames);
    continue;
  }
  const { byNode, totalUs } = selfTime(p, from, to);
  const pct = (us: number): string => `${((us / Math.max(totalUs, 1)) * 100).toFixed(1).padStart(5)}%`;
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  for (const [id, us] of byNode) {
    const f = frames.get(id)!;
    byFunction.set(where(f), (byFunction.get(where(f)) ?? 0) + us);
    byGroup.set(group(f), (byGroup.get(group(f)) ?? 0) + us);
  }
  const lengthS = (p.endTime - p.startTime) / 1e6;
  process.stdout.write(`${basename(file)}: ${(totalUs / 1e6).toFixed(2)} s from ${from} s to ${Math.min(to, lengthS).toFixed(2)} s of ${lengthS.toFixed(2)} s\n`);
  for (const [name, us] of [...byGroup].sort((a, b) => b[1] - a[1])) process.stdout.write(`  ${pct(us)}  ${(us / 1e6).toFixed(2).padStart(7)} s  ${name}\n`);
  process.stdout.write("  top functions by self time:\n");
  for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(us)}  ${(us / 1e6).toFixed(2).padStart(7)} s  ${name}\n`);
}
