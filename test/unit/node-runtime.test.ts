/**
 * The Node this suite runs on can run the service as it is deployed: CI runs the suite on the
 * machine's Node and on each supported LTS line (.ci/run), so this checks every one of them.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import semver from "semver";
import { expect, it } from "vitest";
import { SERVICE_NODE_FLAGS } from "../../src/node-flags.js";

it(`accepts the service's V8 flags (${process.version})`, () => {
  const run = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, "-e", "0"], { encoding: "utf8", timeout: 20_000 });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
});

it(`is a Node that package.json's engines admits (${process.version})`, () => {
  const engines = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { engines: { node: string } }).engines.node;
  expect(semver.satisfies(process.version, engines)).toBe(true);
});
