/**
 * Requests waiting for their reply, in a ring indexed by a sequential token: the ones in
 * flight never collide while the ring is longer than their span, and it doubles when not.
 * Not a Map: a Map with an entry added and deleted per request kept those entries alive past
 * two scavenges in V8 11 (node 20), promoting them all (docs/performance.md).
 */
export type Waiting = { readonly token: number; readonly deadline: number };

export class PendingRing<P extends Waiting> {
  private slots: Array<P | undefined>;
  private count = 0;
  private next = 0;

  constructor(initialSize = 1024) {
    let size = 1;
    while (size < initialSize) size *= 2;
    this.slots = new Array<P | undefined>(size).fill(undefined);
  }

  /** The token for the next request (the reply subject carries it). */
  nextToken(): number {
    return this.next++;
  }

  get size(): number {
    return this.count;
  }

  put(p: P): void {
    while (this.slots[p.token & (this.slots.length - 1)] !== undefined) this.grow();
    this.slots[p.token & (this.slots.length - 1)] = p;
    this.count++;
  }

  /** The request waiting under `token`, removed; undefined if none (expired, or not a token). */
  take(token: number): P | undefined {
    if (!Number.isSafeInteger(token) || token < 0) return undefined;
    const i = token & (this.slots.length - 1);
    const p = this.slots[i];
    if (p === undefined || p.token !== token) return undefined;
    this.slots[i] = undefined;
    this.count--;
    return p;
  }

  /** Removes and returns the requests whose deadline passed (all of them with `now` = Infinity). */
  takeExpired(now: number): P[] {
    const out: P[] = [];
    if (this.count === 0) return out;
    for (const p of this.slots) {
      if (p === undefined || p.deadline > now) continue;
      this.take(p.token);
      out.push(p);
    }
    return out;
  }

  private grow(): void {
    for (let size = this.slots.length * 2; ; size *= 2) {
      const next = new Array<P | undefined>(size).fill(undefined);
      let fits = true;
      for (const p of this.slots) {
        if (p === undefined) continue;
        const i = p.token & (size - 1);
        if (next[i] !== undefined) {
          fits = false;
          break;
        }
        next[i] = p;
      }
      if (fits) {
        this.slots = next;
        return;
      }
    }
  }
}
