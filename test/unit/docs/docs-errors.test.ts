import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, ErrorCode, RegistryError } from "../../../src/domain/errors.js";
import { TRUST_REASONS } from "../../../src/domain/trust/trust-refusal.js";

const page = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");

/** The rows of the catalogue table: status, code, when, what to do. */
function tableRows(markdown: string): Array<{ status: string; code: string; when: string; todo: string }> {
  return markdown
    .split("\n")
    .filter((line) => /^\|\s*\d{3}\s*\|/.test(line))
    .map((line) => {
      const cells = line.split("|").slice(1, -1).map((c) => c.trim());
      return { status: cells[0] ?? "", code: (cells[1] ?? "").replace(/`/g, ""), when: cells[2] ?? "", todo: cells[3] ?? "" };
    });
}

describe("docs/errors.md", () => {
  const rows = tableRows(page);

  it.each(Object.entries(ERROR_CATALOGUE))("documents %s with its status", (code, { status }) => {
    const matching = rows.filter((r) => r.code === code);
    expect(matching, `one row for ${code}`).toHaveLength(1);
    expect(matching[0]?.status).toBe(String(status));
    expect(matching[0]?.when.length).toBeGreaterThan(10);
    expect(matching[0]?.todo.length).toBeGreaterThan(5);
  });

  it("has no row for a code the catalogue does not know", () => {
    const known = new Set<string>(Object.values(ErrorCode));
    expect(rows.map((r) => r.code).filter((c) => !known.has(c))).toEqual([]);
    expect(rows).toHaveLength(Object.keys(ERROR_CATALOGUE).length);
  });

  it("matches the status every RegistryError carries", () => {
    for (const code of Object.values(ErrorCode)) {
      const e = new RegistryError(code, "x");
      expect(rows.find((r) => r.code === code)?.status).toBe(String(e.status));
      expect(e.toBody()).toEqual({ error: { code, message: "x" } });
    }
  });

  it("shows the error headers and body of the protocol", () => {
    expect(page).toContain("Nats-Service-Error-Code");
    expect(page).toContain("Nats-Service-Error");
    expect(page).toContain('{"error":{"code":"<code>","message":"...","issues":');
  });

  it("lists every signature refusal reason once, and no other (v1.2)", () => {
    const section = page.slice(page.indexOf("## Signature refusals"));
    const reasons = section.split("\n").flatMap((line) => /^\|\s*`([a-z_]+)`\s*\|/.exec(line)?.[1] ?? []);
    expect([...reasons].sort()).toEqual([...TRUST_REASONS].sort());
  });
});
