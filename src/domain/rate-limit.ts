/**
 * Per-agent-type budgets (docs/reliability.md, "Floods"): token buckets keyed by agent_type,
 * refilled at `ratePerSecond` up to `burst`. Two uses: write requests per second (each costs
 * 1, checked before the body is even parsed), and milliseconds of spec validation per second
 * (spent after the fact, so a bucket may go into debt and the type then waits it off). Pure:
 * time comes in as an argument. At most `maxKeys` buckets are kept, least recently used
 * dropped first, so random agent types cannot grow it without bound.
 */

type Bucket = { tokens: number; at: number };

export class TypeBudgets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Milliseconds until `key` is out of debt (a positive balance); 0 when it may go now. */
  waitMs(key: string, now: number): number {
    const b = this.bucket(key, now);
    return b.tokens > 0 ? 0 : Math.ceil(((1 - b.tokens) / this.ratePerSecond) * 1000);
  }

  /** Takes `cost` if the balance holds it; else the wait in ms until it will. */
  take(key: string, cost: number, now: number): number {
    const b = this.bucket(key, now);
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return 0;
    }
    return Math.ceil(((cost - b.tokens) / this.ratePerSecond) * 1000);
  }

  /** Spends `cost` whatever the balance: work already done is paid for. */
  spend(key: string, cost: number, now: number): void {
    this.bucket(key, now).tokens -= cost;
  }

  get size(): number {
    return this.buckets.size;
  }

  private bucket(key: string, now: number): Bucket {
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key); // re-inserted below: the map's order is least recently used first
      b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * this.ratePerSecond);
      b.at = now;
    } else {
      b = { tokens: this.burst, at: now };
      while (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    this.buckets.set(key, b);
    return b;
  }
}
