import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, configSchema, loadConfig } from "../../../src/config/service.js";
import { MCP_VARIABLES, mcpConfigSchema } from "../../../src/config/mcp.js";
import { AUDIT_VARIABLES, auditConfigSchema } from "../../../src/config/audit.js";
import { DISCOVERY_VARIABLES, discoveryConfigSchema } from "../../../src/config/discovery.js";

const whole = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
// The service's table comes first; the MCP server's settings have a section of their own.
const MCP_HEADING = /^## `agent-registry mcp`$/m;
const AUDIT_HEADING = /^## `agent-registry audit`$/m;
const DISCOVERY_HEADING = /^## `agent-registry discovery`$/m;
const [page = "", rest = ""] = whole.split(MCP_HEADING);
const [mcpSection = "", afterMcp = ""] = rest.split(AUDIT_HEADING);
const [auditSection = "", discoverySection = ""] = afterMcp.split(DISCOVERY_HEADING);

type Row = { env: string; flag: string; default: string; meaning: string };

/** The rows of the settings table (those whose first cell is a `VARIABLE`). */
function tableRows(markdown: string): Row[] {
  return markdown
    .split("\n")
    .filter((line) => /^\|\s*`[A-Z][A-Z0-9_]*`\s*\|/.test(line))
    .map((line) => {
      const [env = "", flag = "", def = "", meaning = ""] = line.split("|").slice(1, -1).map((c) => c.trim());
      return { env: env.replace(/`/g, ""), flag: flag.replace(/`/g, ""), default: def, meaning };
    });
}

/** How the page writes a default: the value in backticks, or "(none)". */
const shown = (value: unknown): string => (value === undefined ? "(none)" : `\`${String(value)}\``);

type DocumentedVariable = { env: string; flag: string; default?: unknown };

/** One test per setting: its row names its flag and its default, and says what it means. */
function itHasRowsFor(rows: readonly Row[], variables: readonly DocumentedVariable[]): void {
  it.each(variables.map((v) => [v.env, v] as const))("has a row for %s with its flag and default", (_env, v) => {
    const row = rows.find((r) => r.env === v.env);
    expect(row, `row for ${v.env}`).toBeDefined();
    expect(row?.flag).toBe(`--${v.flag}`);
    expect(row?.default).toBe(shown(v.default));
    expect(row?.meaning.length).toBeGreaterThan(5);
  });
}

describe("docs/configuration.md", () => {
  const rows = tableRows(page);

  itHasRowsFor(rows, CONFIG_VARIABLES);

  it("has no rows for unknown variables and none twice", () => {
    const known = new Set<string>(CONFIG_VARIABLES.map((v) => v.env));
    expect(rows.map((r) => r.env).filter((env) => !known.has(env))).toEqual([]);
    expect(new Set(rows.map((r) => r.env)).size).toBe(rows.length);
    expect(rows).toHaveLength(CONFIG_VARIABLES.length);
  });

  it("documents the defaults the schema really applies", () => {
    const defaults = configSchema.parse({}) as Record<string, unknown>;
    for (const v of CONFIG_VARIABLES) expect(defaults[v.key], v.env).toEqual(v.default);
  });

  it("covers every key of the schema", () => {
    const keys = Object.keys(configSchema.shape).sort();
    expect(CONFIG_VARIABLES.map((v) => v.key as string).sort()).toEqual(keys);
  });

  it("quotes an error message that loadConfig really gives", () => {
    let message = "";
    try {
      loadConfig({ REGISTRY_REPLICAS: "9" });
    } catch (e) {
      if (e instanceof ConfigError) message = e.message.split("\n")[1]?.trim() ?? "";
    }
    expect(message).toMatch(/^REGISTRY_REPLICAS \/ --replicas: /);
    expect(page).toContain(`\`${message}\``);
  });
});

type CommandVariable = DocumentedVariable & { key: string };

/**
 * The table of a command's own section against its settings list and schema. `required` are
 * settings the schema needs a value for (no default to compare), given as `base`.
 */
function describeCommandSection(command: string, section: string, variables: readonly CommandVariable[], schema: { parse(v: unknown): unknown; shape: object }, base: Record<string, unknown> = {}): void {
  describe(`docs/configuration.md, section agent-registry ${command}`, () => {
    const rows = tableRows(section);

    itHasRowsFor(rows, variables);

    it("has a row for each setting and no other", () => {
      expect(rows.map((r) => r.env).sort()).toEqual(variables.map((v) => v.env).sort());
    });

    it("documents the defaults the schema really applies", () => {
      const defaults = schema.parse(base) as Record<string, unknown>;
      for (const v of variables) if (!(v.key in base)) expect(defaults[v.key], v.env).toEqual(v.default);
      expect(Object.keys(schema.shape).sort()).toEqual(variables.map((v) => v.key).sort());
    });
  });
}

describeCommandSection("mcp", mcpSection, MCP_VARIABLES, mcpConfigSchema);
describeCommandSection("audit", auditSection, AUDIT_VARIABLES, auditConfigSchema, { databaseUrl: "postgres://x/y" });
describeCommandSection("discovery", discoverySection, DISCOVERY_VARIABLES, discoveryConfigSchema);
