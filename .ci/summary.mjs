// The closing lines of .ci/run: each part's counts and time, every failure and every test that
// passed only on its retry by name, then "N passed, N failed" over all parts. Reads
// .ci/out/runs.tsv (id, status, seconds, description, clients) and the reports beside it:
// vitest's JSON, pytest's JUnit XML (clients-<id>-python.xml) and `go test -json` lines
// (clients-<id>-go.json). A report that is missing counts as a failure, never as nothing.
import { existsSync, readFileSync } from "node:fs";

const out = ".ci/out";
const rel = (file) => file.replace(process.cwd() + "/", "");
const firstLine = (text) => (text || "").split("\n")[0].slice(0, 300);
const total = { passed: 0, failed: 0, skipped: 0, flaky: 0 };

/** vitest's JSON reporter: counts, failures and tests that passed on their retry. */
function vitest(file) {
  const r = JSON.parse(readFileSync(file, "utf8"));
  const lines = [];
  let flaky = 0;
  // Failures no test carries: a file whose import or hook threw, or an unhandled error. Each
  // counts as one failure, so the closing line never says "0 failed" of a failed run.
  let otherFailures = 0;
  for (const f of r.testResults) {
    for (const t of f.assertionResults) {
      if (t.status === "failed") lines.push(`  FAILED ${rel(f.name)} > ${t.fullName}: ${firstLine(t.failureMessages[0])}`);
      if (t.status === "passed" && t.failureMessages.length > 0) {
        flaky++;
        lines.push(`  FLAKY (passed on its retry) ${rel(f.name)} > ${t.fullName}: ${firstLine(t.failureMessages[0])}`);
      }
    }
    // A file fails without a failed test when its import or a hook throws (beforeAll: its tests
    // then count as skipped); its message is the only place the cause is written.
    const testFailed = f.assertionResults.some((t) => t.status === "failed");
    if (f.status === "failed" && !testFailed) {
      const skipped = f.assertionResults.filter((t) => t.status !== "passed").length;
      otherFailures++;
      lines.push(`  FAILED ${rel(f.name)}${skipped ? ` (its ${skipped} tests did not run)` : ""}: ${firstLine(f.message) || "no message"}`);
    }
  }
  // vitest exits 1 on an unhandled error even when every test passed; the JSON only says success.
  if (!r.success && r.numFailedTests === 0 && otherFailures === 0) {
    otherFailures++;
    lines.push("  FAILED vitest reported no success, with no failed test or file: an unhandled error (see vitest's output above)");
  }
  return { passed: r.numPassedTests, failed: r.numFailedTests + otherFailures, skipped: r.numPendingTests + r.numTodoTests, flaky, lines };
}

/** pytest's JUnit XML: one <testcase> per test, with a <failure>, <error> or <skipped> child. */
function junit(file) {
  const xml = readFileSync(file, "utf8");
  const counts = { passed: 0, failed: 0, skipped: 0, flaky: 0, lines: [] };
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = m[1];
    const body = m[3] ?? "";
    const name = `${/classname="([^"]*)"/.exec(attrs)?.[1] ?? ""}::${/\bname="([^"]*)"/.exec(attrs)?.[1] ?? ""}`;
    if (/<(failure|error)\b/.test(body)) {
      counts.failed++;
      counts.lines.push(`  FAILED clients/python ${name}: ${firstLine(/message="([^"]*)"/.exec(body)?.[1])}`);
    } else if (/<skipped\b/.test(body)) counts.skipped++;
    else counts.passed++;
  }
  return counts;
}

/** `go test -json`: one pass, fail or skip action per test and subtest. */
function goJson(file) {
  const counts = { passed: 0, failed: 0, skipped: 0, flaky: 0, lines: [] };
  const failedPackages = new Set();
  const packagesWithFailedTests = new Set();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const e = JSON.parse(line);
    if (!e.Test) {
      if (e.Action === "fail") failedPackages.add(e.Package);
      continue;
    }
    if (e.Action === "pass") counts.passed++;
    else if (e.Action === "skip") counts.skipped++;
    else if (e.Action === "fail") {
      counts.failed++;
      packagesWithFailedTests.add(e.Package);
      counts.lines.push(`  FAILED clients/go ${e.Package} ${e.Test}`);
    }
  }
  // A package that failed to build, or failed outside any test, has no failed test to name.
  for (const pkg of failedPackages) {
    if (packagesWithFailedTests.has(pkg)) continue;
    counts.failed++;
    counts.lines.push(`  FAILED clients/go package ${pkg} (no test failed: a build failure or a failure outside the tests)`);
  }
  return counts;
}

const [, , seconds] = process.argv;
for (const line of readFileSync(`${out}/runs.tsv`, "utf8").trim().split("\n")) {
  const [id, runStatus, partSeconds, label, clients = ""] = line.split("\t");
  if (runStatus === "install-failed") {
    total.failed++;
    console.log(`${label}: no test report (node could not be installed)`);
    continue;
  }
  const reports = [["TypeScript", `${out}/vitest-${id}.json`, vitest]];
  for (const client of clients.trim().split(/\s+/).filter(Boolean)) {
    if (client === "python") reports.push(["Python", `${out}/clients-${id}-python.xml`, junit]);
    if (client === "go") reports.push(["Go", `${out}/clients-${id}-go.json`, goJson]);
  }
  const parts = [];
  const lines = [];
  for (const [language, file, read] of reports) {
    if (!existsSync(file)) {
      total.failed++;
      parts.push(`${language}: no test report (the run crashed or never started)`);
      continue;
    }
    const c = read(file);
    total.passed += c.passed;
    total.failed += c.failed;
    total.skipped += c.skipped;
    total.flaky += c.flaky;
    parts.push(`${language} ${c.passed} passed, ${c.failed} failed${c.skipped ? `, ${c.skipped} skipped` : ""}`);
    lines.push(...c.lines);
  }
  const steps = runStatus === "0" ? "all steps passed" : "a step failed";
  console.log(`${label}: ${parts.join("; ")} (${steps}, ${partSeconds} s)`);
  for (const l of lines) console.log(l);
}
console.log(`CI took ${Math.round(Number(seconds) / 60)} min`);
console.log(
  `${total.passed} passed, ${total.failed} failed` +
    (total.skipped ? `, ${total.skipped} skipped` : "") +
    (total.flaky ? ` (${total.flaky} passed only on a retry: see FLAKY above)` : ""),
);
