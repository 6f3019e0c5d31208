/**
 * What a scenario is and what it reports. A row puts one figure next to its target and the
 * baseline it is a ratio of; `pass` is null for figures that have no target of their own.
 */
export type Row = {
  measure: string;
  figure: string;
  baseline: string;
  target: string;
  pass: boolean | null;
};

/**
 * `notes` are short lines for docs/performance.md; `details` go to latest.json only. `skipped`
 * says in one line why a scenario could not run here (a server too old for it): the report
 * shows the line, and a full run's results keep the scenario's last figures.
 */
export type ScenarioResult = { rows: Row[]; notes?: string[]; details: Record<string, unknown>; skipped?: string };

export type Context = {
  readonly quick: boolean;
  /** Where the registry writes its CPU profile (node --cpu-prof), when asked for. */
  readonly cpuProfDir: string | undefined;
  /** The registry's node flags: the service's own (SERVICE_NODE_FLAGS) unless --node-flags says otherwise. */
  readonly nodeFlags: readonly string[];
  log(message: string): void;
  /** A broken scenario (errors, nothing measured) fails the run in every mode. */
  check(ok: boolean, what: string): void;
};

export type Scenario = {
  readonly name: string;
  readonly title: string;
  /** Other names `--only` accepts (the targets this scenario measures). */
  readonly aliases?: readonly string[];
  /** How it measures, for docs/performance.md. */
  readonly method: string;
  run(ctx: Context): Promise<ScenarioResult>;
};

export class ScenarioBroken extends Error {
  override name = "ScenarioBroken";
}

export const fmt = (v: number, digits = 0): string => v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const ratio = (v: number): string => `${v.toFixed(2)} x`;
