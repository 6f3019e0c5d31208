/**
 * The one settings loader of every entry point (`serve`, `mcp`, `audit`): each declares a table
 * of rows (key, environment variable, flag, default, what it does) and a zod schema; this reads
 * the environment, then the flags (flags win), then overrides (tests and embedding code), parses
 * once, and freezes the result. A bad value is a ConfigError naming the variable and the flag,
 * every bad value at once. docs/configuration.md is checked against the tables by a test.
 */
import type { z } from "zod";

/** One setting: where it comes from and what it does (the --help text and the docs' row). */
export type SettingRow = {
  readonly key: string;
  readonly env: string;
  readonly flag: string;
  readonly default: unknown;
  readonly doc: string;
};

export type GivenFlag = string | boolean | readonly string[] | undefined;
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  /** One line per bad setting: `ENV / --flag: what is wrong`. */
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

export type SettingSources = {
  env?: Env;
  flags?: Readonly<Record<string, GivenFlag>>;
  overrides?: Readonly<Record<string, unknown>>;
};

/** An empty variable, and a repeatable flag given no times, count as unset. */
function given(value: GivenFlag): boolean {
  return value !== undefined && value !== "" && !(Array.isArray(value) && value.length === 0);
}

export function loadSettings<S extends z.ZodType>(table: readonly SettingRow[], schema: S, { env = {}, flags = {}, overrides = {} }: SettingSources): Readonly<z.output<S>> {
  const raw: Record<string, unknown> = {};
  for (const row of table) {
    const fromEnv = env[row.env];
    if (given(fromEnv)) raw[row.key] = fromEnv;
    const fromFlag = flags[row.flag];
    if (given(fromFlag)) raw[row.key] = fromFlag;
  }
  Object.assign(raw, overrides);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = String(issue.path[0] ?? "");
        const row = table.find((r) => r.key === key);
        const what = issue.code === "invalid_type" && raw[key] === undefined ? "required" : issue.message;
        return `${row ? `${row.env} / --${row.flag}` : key}: ${what}`;
      }),
    );
  }
  return deepFreeze(parsed.data);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Keys renamed under a prefix: `httpPort` under "mcp" is `mcpHttpPort`. */
export type Prefixed<P extends string, T> = { [K in keyof T & string as `${P}${Capitalize<K>}`]: T[K] };

export function prefixedKey<P extends string, K extends string>(prefix: P, key: K): `${P}${Capitalize<K>}` {
  return `${prefix}${key.charAt(0).toUpperCase()}${key.slice(1)}` as `${P}${Capitalize<K>}`;
}

export function prefixed<P extends string, T extends Record<string, unknown>>(prefix: P, fields: T): Prefixed<P, T> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [prefixedKey(prefix, k), v])) as Prefixed<P, T>;
}
