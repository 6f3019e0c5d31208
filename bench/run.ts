/**
 * `npm run bench`: runs the benchmark scenarios, prints their figures next to targets and
 * baselines, writes bench/results/latest.json and rewrites docs/performance.md.
 *
 *   npm run bench                      every scenario at full scale (about 25 minutes)
 *   npm run bench -- --only lookup     one scenario (or one of the targets it measures)
 *   npm run bench -- --quick           every scenario at a tiny scale, for CI: timings are
 *                                      not asserted, but a scenario that breaks fails the run
 *   npm run bench -- --cpu-prof        also writes the registry's CPU profiles to bench/results/profiles
 *   npm run bench -- --strict          exit 1 when a target is missed, too
 *   npm run bench -- --ref HEAD~3      measure the registry of another commit (a "before"); its
 *                                      figures go to bench/results/ref-<ref>.json, not the docs
 *   npm run bench -- --node-flags=""   run the registry with other node flags than the service's
 *                                      own (src/node-flags.ts); figures go to a ref-*.json file too
 */
import { mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/processes.js";
import { ScenarioBroken, type Context, type Scenario, type ScenarioResult } from "./lib/scenario.js";
import { textTable, verdict } from "./lib/table.js";
import { collectEnvironment, writeResults, type RunRecord } from "./lib/report.js";
import { buildRegistry } from "./lib/build.js";
import { SCENARIOS } from "./scenarios/index.js";
import { SERVICE_NODE_FLAGS } from "../src/node-flags.js";

let values: ReturnType<typeof parseBenchArgs>["values"];
try {
  ({ values } = parseBenchArgs());
} catch (e) {
  process.stderr.write(`${(e as Error).message}\nrun npm run bench -- --help for usage\n`);
  process.exit(2);
}

function parseBenchArgs() {
  return parseArgs({
    options: {
      quick: { type: "boolean", default: false },
      only: { type: "string", multiple: true },
      "cpu-prof": { type: "boolean", default: false },
      strict: { type: "boolean", default: false },
      ref: { type: "string" },
      "node-flags": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
}

if (values.help) {
  process.stdout.write(`usage: npm run bench -- [--quick] [--only NAME]... [--cpu-prof] [--strict] [--ref COMMIT] [--node-flags="FLAGS"]\nscenarios: ${SCENARIOS.map((s) => [s.name, ...(s.aliases ?? [])].join("|")).join(", ")}\n`);
  process.exit(0);
}

const wanted = (values.only ?? []).flatMap((o) => o.split(","));
const chosen: Scenario[] = wanted.length === 0 ? SCENARIOS : [];
for (const name of wanted) {
  const s = SCENARIOS.find((x) => x.name === name || x.aliases?.includes(name));
  if (!s) {
    process.stderr.write(`unknown scenario ${name}; known: ${SCENARIOS.map((x) => x.name).join(", ")}\n`);
    process.exit(2);
  }
  if (!chosen.includes(s)) chosen.push(s);
}

const quick = values.quick ?? false;
const nodeFlags = values["node-flags"] === undefined ? SERVICE_NODE_FLAGS : values["node-flags"].split(/\s+/).filter(Boolean);
// Figures of another build or other flags are a "before", kept apart from the docs' figures.
const flagsLabel = values["node-flags"] === undefined ? undefined : `node-flags-${nodeFlags.map((f) => f.replace(/^-+/, "")).join("_") || "none"}`;
const refLabel = [values.ref, flagsLabel].filter(Boolean).join("-") || undefined;
const cpuProfDir = values["cpu-prof"] ? join(ROOT, "bench/results/profiles") : undefined;
if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
const started = Date.now();
const env = await collectEnvironment();
process.stdout.write(`agent-registry bench (${quick ? "quick" : "full"}): ${env.machine.cores} cores, ${env.machine.cpuModel}, node ${env.versions.node}, nats-server ${env.versions.natsServer}\n`);

const build = await buildRegistry(values.ref);
process.stdout.write(`compiled ${values.ref ? `src/ of ${values.ref}` : "src/"} for the registry processes in ${build.seconds.toFixed(1)} s${build.warnings ? ` (tsc reported:\n${build.warnings})` : ""}\n`);

const records: RunRecord[] = [];
let broken = 0;
for (const scenario of chosen) {
  const t0 = Date.now();
  const log = (m: string): void => void process.stdout.write(`  [${scenario.name} +${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}\n`);
  const ctx: Context = {
    quick,
    cpuProfDir,
    nodeFlags,
    log,
    check(ok, what) {
      if (!ok) throw new ScenarioBroken(what);
    },
  };
  process.stdout.write(`- ${scenario.name}: ${scenario.title}\n`);
  let result: ScenarioResult | null = null;
  let error: string | undefined;
  // Other work on the machine moves the absolute figures; the load average says how much there was.
  const loadBefore = loadavg()[0]!;
  try {
    result = await scenario.run(ctx);
  } catch (e) {
    broken++;
    error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    process.stdout.write(`  BROKEN: ${error}\n`);
  }
  const seconds = Math.round((Date.now() - t0) / 1000);
  const loadAverage = { before: round2(loadBefore), after: round2(loadavg()[0]!) };
  records.push({ scenario: scenario.name, title: scenario.title, method: scenario.method, quick, at: new Date(t0).toISOString(), seconds, loadAverage, rows: result?.rows ?? [], notes: result?.notes, details: result?.details ?? {}, error, skipped: result?.skipped, natsServer: env.versions.natsServer });
  for (const row of result?.rows ?? []) log(`${row.measure}: ${row.figure} [target ${row.target}] ${verdict(row.pass)}`);
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}

const rows = records.flatMap((r) =>
  r.error ? [[r.scenario, "BROKEN", r.error.split("\n")[0] ?? "", "", "", "FAIL"]] : r.skipped ? [[r.scenario, "SKIPPED", r.skipped, "", "", "SKIP"]] : r.rows.map((row) => [r.scenario, row.measure, row.figure, row.baseline, row.target, verdict(row.pass)]),
);
process.stdout.write(`\n${textTable(["scenario", "measure", "figure", "baseline", "target", "result"], rows)}\n`);
const written = writeResults(records, { ...env, nodeFlags: [...nodeFlags] }, quick, refLabel);
process.stdout.write(`\nwrote ${written.join(", ")} in ${Math.round((Date.now() - started) / 1000)} s\n`);

const missed = records.flatMap((r) => r.rows).filter((r) => r.pass === false).length;
if (broken > 0) process.stdout.write(`${broken} scenario(s) broke\n`);
if (missed > 0) process.stdout.write(`${missed} target(s) missed${quick ? " (not asserted in quick mode)" : ""}\n`);
process.exit(broken > 0 || (values.strict && !quick && missed > 0) ? 1 : 0);
