/**
 * Reports the bucket entries the view skipped because it could not read them (issue 14): each
 * is counted (the metric), and each key is logged once, with what was wrong, so an operator can
 * find and fix it (`nats kv del`) without the log growing with every rewrite of the same key.
 * The keys remembered are bounded: past the bound further keys are counted, not logged.
 */
import type { Logger } from "../../kit/logger.js";

/** Distinct keys logged before the rest are only counted. */
export const MAX_LOGGED_UNREADABLE_KEYS = 1000;

export class UnreadableRecords {
  private readonly logged = new Set<string>();
  private capped = false;

  constructor(
    private readonly log: Logger,
    private readonly onCounted?: () => void,
  ) {}

  report(key: string, revision: number, problem: string): void {
    this.onCounted?.();
    if (this.logged.has(key)) return;
    if (this.logged.size >= MAX_LOGGED_UNREADABLE_KEYS) {
      if (!this.capped) this.log.error({ keys: this.logged.size }, "more unreadable records: counted in agent_registry_store_records_unreadable_total, no longer logged");
      this.capped = true;
      return;
    }
    this.logged.add(key);
    this.log.error({ key, revision, problem }, "skipped a store record the registry cannot read; the rest of the fleet is served");
  }
}
