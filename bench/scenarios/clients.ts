/**
 * The Python and Go clients against a bare request in their own language, each in one run
 * (clients/python/bench/lookup_bench.py, clients/go/bench_test.go): what the client's
 * encoding, reply model and error mapping add to a lookup, with the registry and the machine's
 * load the same for both halves. Also the CPU a heartbeating Python agent process spends per
 * heartbeat, and the Go orchestrator's RouteByScore answered from the live view against the
 * static file's implementation.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REGISTRY_MAIN } from "../lib/build.js";
import { ROOT, natsBinary } from "../lib/processes.js";
import { fmt, ratio, type Context, type Row, type Scenario, type ScenarioResult } from "../lib/scenario.js";

const PYTHON_TARGET = 1.5;
const GO_TARGET = 1.2;

type PythonFigures = { requests: number; client_p50_us: number; client_p99_us: number; bare_p50_us: number; bare_p99_us: number; heartbeats: number; heartbeat_cpu_us: number | null };

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ ok: boolean; stdout: string; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ ok: err === null, stdout, output: `${stdout}${stderr}${err ? `\n${err.message}` : ""}` });
    });
  });
}

/** The figures of one `go test -bench` result line: ns/op and the metrics it reported. */
export function goBenchLine(output: string, name: string): Record<string, number> | undefined {
  const line = output.split("\n").find((l) => new RegExp(`^${name}(-\\d+)?\\s`).test(l));
  if (line === undefined) return undefined;
  const fields = line.trim().split(/\s+/).slice(2);
  const figures: Record<string, number> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) figures[fields[i + 1]!] = Number(fields[i]);
  return figures;
}

async function python(ctx: Context, env: NodeJS.ProcessEnv): Promise<{ rows: Row[]; details: PythonFigures }> {
  const dir = join(ROOT, "clients/python");
  const venv = await run("bash", ["scripts/venv.sh"], dir, env, 600_000);
  ctx.check(venv.ok, `the Python client's virtualenv could not be made:\n${venv.output.slice(-2000)}`);
  // venv.sh prints the path alone on stdout, its progress on stderr.
  const python = join(venv.stdout.trim(), "bin/python");
  const scratch = mkdtempSync(join(tmpdir(), "bench-python-"));
  try {
    const out = join(scratch, "figures.json");
    const args = ["-m", "bench.lookup_bench", "--requests", ctx.quick ? "200" : "5000", "--beat-seconds", ctx.quick ? "2" : "20", "--json", out];
    const r = await run(python, args, dir, env, 600_000);
    ctx.check(r.ok, `the Python client's benchmark failed:\n${r.output.slice(-2000)}`);
    ctx.log(r.output.trim());
    const f = JSON.parse(readFileSync(out, "utf8")) as PythonFigures;
    const p50 = f.client_p50_us / f.bare_p50_us;
    const p99 = f.client_p99_us / f.bare_p99_us;
    const rows: Row[] = [
      { measure: "Python RegistryClient.lookup p50", figure: `${fmt(f.client_p50_us)} µs (${ratio(p50)})`, baseline: `bare nats-py request ${fmt(f.bare_p50_us)} µs`, target: `<= ${PYTHON_TARGET} x`, pass: p50 <= PYTHON_TARGET },
      { measure: "Python RegistryClient.lookup p99", figure: `${fmt(f.client_p99_us)} µs (${ratio(p99)})`, baseline: `bare nats-py request ${fmt(f.bare_p99_us)} µs`, target: `<= ${PYTHON_TARGET} x`, pass: p99 <= PYTHON_TARGET },
      {
        measure: "Python agent CPU per heartbeat (100 ms interval)",
        figure: f.heartbeat_cpu_us === null ? "no heartbeat counted" : `${fmt(f.heartbeat_cpu_us)} µs`,
        baseline: "the whole process (loop, pings) over the run",
        target: "reported",
        pass: null,
      },
    ];
    return { rows, details: f };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function go(ctx: Context, env: NodeJS.ProcessEnv): Promise<{ rows: Row[]; details: Record<string, unknown> }> {
  const dir = join(ROOT, "clients/go");
  const times = ctx.quick ? "200x" : "5000x";
  const r = await run("go", ["test", "-run", "^$", "-bench", "^(BenchmarkLookupClientVsBare|BenchmarkRouteByScore)$", "-benchtime", times, "-count", "1", "."], dir, env, 900_000);
  ctx.check(r.ok, `the Go client's benchmarks failed:\n${r.output.slice(-2000)}`);
  ctx.log(r.output.trim());
  const lookup = goBenchLine(r.output, "BenchmarkLookupClientVsBare");
  const file = goBenchLine(r.output, "BenchmarkRouteByScore/file");
  const live = goBenchLine(r.output, "BenchmarkRouteByScore/live");
  const op = goBenchLine(r.output, "BenchmarkRouteByScore/route-op");
  ctx.check(lookup !== undefined && file !== undefined && live !== undefined && op !== undefined, `the Go benchmarks printed no figures:\n${r.output.slice(-2000)}`);
  const p50 = lookup!["client/bare-p50"]!;
  const liveRatio = live!["ns/op"]! / file!["ns/op"]!;
  const rows: Row[] = [
    { measure: "Go Client.Lookup p50", figure: `${fmt(lookup!["client-p50-µs"]!)} µs (${ratio(p50)})`, baseline: `bare nats.go request ${fmt(lookup!["bare-p50-µs"]!)} µs`, target: `<= ${GO_TARGET} x`, pass: p50 <= GO_TARGET },
    {
      measure: "Go RouteByScore from the live view, 500 agents",
      figure: `${fmt(live!["ns/op"]! / 1000, 1)} µs (${ratio(liveRatio)})`,
      baseline: `the file implementation ${fmt(file!["ns/op"]! / 1000, 1)} µs; the route op over NATS ${fmt(op!["ns/op"]! / 1000)} µs`,
      target: "reported",
      pass: null,
    },
  ];
  return { rows, details: { lookup, file, live, routeOp: op } };
}

export const clientsScenario: Scenario = {
  name: "clients",
  title: "The Python and Go clients",
  aliases: ["python", "go"],
  method:
    "One registry per client, started by the client's own benchmark from this run's build. Python (clients/python/bench/lookup_bench.py): " +
    "RegistryClient.lookup and a bare nats-py request for the same capability, interleaved one for one, p50 and p99 of each; then an " +
    "agent process heartbeating every 100 ms, its CPU (from /proc) over the heartbeats it sent. Go (clients/go/bench_test.go): " +
    "Client.Lookup and a bare nats.go request, alternated, medians; RouteByScore over a 500-agent file from the file implementation and " +
    "from the live view of a registry that loaded the same file, and the route op for scale.",
  async run(ctx: Context): Promise<ScenarioResult> {
    const env = { ...process.env, NATS_SERVER_BIN: natsBinary(), AGENT_REGISTRY_BIN: REGISTRY_MAIN };
    const p = await python(ctx, env);
    const g = await go(ctx, env);
    return { rows: [...p.rows, ...g.rows], details: { python: p.details, go: g.details } };
  },
};
