/**
 * docs/sdk.md and docs/cli.md against the code: every SDK export, every CLI command, common
 * option and exit code is documented, so a new one cannot be left out.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as sdk from "../../../src/client/index.js";
import { COMMANDS } from "../../../src/cli/main.js";
import { COMMON_OPTIONS, ExitCode } from "../../../src/cli/context.js";

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");

describe("docs/sdk.md", () => {
  const doc = read("docs/sdk.md");
  it.each(Object.keys(sdk))("mentions %s", (name) => {
    expect(doc).toMatch(new RegExp(`\\b${name}\\b`));
  });
});

describe("docs/cli.md", () => {
  const doc = read("docs/cli.md");
  it.each([...COMMANDS.map((c) => c.name), "serve"])("has a section with an example for %s", (name) => {
    const section = doc.split(/^### /m).find((s) => s.startsWith(`\`${name}`));
    expect(section, `### \`${name}\``).toBeDefined();
    expect(section).toMatch(new RegExp(`agent-registry ${name}\\b`));
  });
  it.each(Object.keys(COMMON_OPTIONS))("documents --%s", (flag) => {
    expect(doc).toContain(`--${flag}`);
  });
  it.each(Object.values(ExitCode))("documents exit code %d", (code) => {
    expect(doc).toMatch(new RegExp(`^\\| ${code} \\|`, "m"));
  });
});
