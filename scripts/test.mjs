#!/usr/bin/env node
// `npm test`: the one test command of the README, over the service's vitest projects and the
// Python and Go clients (clients/python, clients/go), each tested against real nats-server and
// registry processes.
//
//   npm test                                   everything
//   npm test -- --project unit --project go    only those; vitest flags pass through to vitest
//
// `python` and `go` are names of client suites, not vitest projects: they run each client's
// scripts/check.sh (lint, type-check, tests) after vitest, against the service built into dist/.
// CLIENT_REPORTS=<prefix> asks the clients for machine-readable reports, for CI's totals:
// <prefix>-python.xml (JUnit) and <prefix>-go.json (go test -json).
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const CLIENTS = {
  python: { label: "Python client (clients/python)", script: "clients/python/scripts/check.sh", reportEnv: "JUNIT_XML", reportSuffix: "-python.xml" },
  go: { label: "Go client (clients/go)", script: "clients/go/scripts/check.sh", reportEnv: "GO_TEST_JSON", reportSuffix: "-go.json" },
};

/** Splits the arguments into client suites and what vitest gets. */
function parse(args) {
  const clients = [];
  const vitestArgs = [];
  let vitestProjects = 0;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const inline = arg.startsWith("--project=") ? arg.slice("--project=".length) : undefined;
    const project = inline ?? (arg === "--project" ? args[i + 1] : undefined);
    if (project !== undefined && project in CLIENTS) {
      clients.push(project);
      if (inline === undefined) i++;
      continue;
    }
    if (project !== undefined) vitestProjects++;
    vitestArgs.push(arg);
  }
  const named = clients.length + vitestProjects > 0;
  return { runVitest: !named || vitestProjects > 0, clients: named ? clients : Object.keys(CLIENTS), vitestArgs };
}

function run(label, command, args, env = process.env) {
  const started = Date.now();
  console.log(`== ${label}`);
  const r = spawnSync(command, args, { cwd: root, stdio: "inherit", env });
  const seconds = Math.round((Date.now() - started) / 1000);
  const ok = r.status === 0;
  console.log(`== ${label}: ${ok ? "passed" : r.error ? `could not start (${r.error.message})` : `failed (exit ${r.status ?? r.signal})`}, ${seconds} s`);
  return { label, ok, seconds };
}

const { runVitest, clients, vitestArgs } = parse(process.argv.slice(2));
const results = [];
if (runVitest) results.push(run("TypeScript (vitest)", "npx", ["vitest", "run", ...vitestArgs]));
if (clients.length > 0) {
  // The clients start the registry from dist/; the build is incremental, so this is quick when
  // nothing changed.
  const build = run("build (dist/, for the clients' registry processes)", "npm", ["run", "--silent", "build"]);
  results.push(build);
  for (const name of clients) {
    const client = CLIENTS[name];
    if (!build.ok) {
      results.push({ label: client.label, ok: false, seconds: 0 });
      continue;
    }
    const env = { ...process.env };
    // Absolute: each client's check.sh runs from its own folder.
    if (process.env.CLIENT_REPORTS) env[client.reportEnv] = resolve(root, `${process.env.CLIENT_REPORTS}${client.reportSuffix}`);
    results.push(run(client.label, "bash", [client.script], env));
  }
}
if (results.length > 1) {
  console.log("== summary");
  for (const r of results) console.log(`   ${r.ok ? "passed" : "FAILED"}  ${r.label} (${r.seconds} s)`);
}
process.exit(results.every((r) => r.ok) ? 0 : 1);
