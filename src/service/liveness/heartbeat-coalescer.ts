/**
 * One heartbeat write in flight per instance. Heartbeats of one instance that overlap (an
 * agent retrying a slow one, or sending from several tasks) all raced the same compare-and-set:
 * 16,717 of 20,000 were answered 409 and some not at all within 10 s (docs/reliability.md).
 * Now a heartbeat that arrives while one is being written joins the next write, whose message
 * is the merge of all that joined (the latest status and active_tasks win), and every joiner
 * gets that write's answer. An agent never gets `conflict` for its own heartbeat.
 *
 * And at most `maxWrites` instances with a write in flight. A store that slows down (a
 * saturated JetStream, a leader election) would otherwise collect every heartbeat that needs a
 * write, each with its request, timer and promise, until they time out together: in a full
 * fleet-1m run on a slow machine, 800,000 heartbeats went that way in four minutes, with the
 * event loop stalled up to 5.7 s and the connection lost 12 times (docs/reliability.md,
 * "Overload"). Past the bound a heartbeat is refused at once (`heartbeat` returns null); one
 * joining a write already in flight is not refused, as it costs the store nothing.
 */
import type { HeartbeatMessage } from "../../domain/messages.js";

type Reply<R> = { resolve: (r: R) => void; reject: (e: unknown) => void };
/** The write that waits for the one in flight: its merged message and who waits for it. */
type Next<R> = { msg: HeartbeatMessage; waiters: Array<Reply<R>> };

type Slot<R> = { next: Next<R> | null };

export class HeartbeatCoalescer<R> {
  /** Instances with a write in flight, and the write that follows it (if any joined). */
  private readonly slots = new Map<string, Slot<R>>();

  constructor(
    private readonly write: (agentType: string, instanceId: string, msg: HeartbeatMessage) => Promise<R>,
    private readonly maxWrites = Number.POSITIVE_INFINITY,
  ) {}

  /** Instances with a heartbeat write in flight (for tests and metrics). */
  get inFlight(): number {
    return this.slots.size;
  }

  /** Whether a write of the instance is in flight. */
  writing(agentType: string, instanceId: string): boolean {
    return this.slots.size > 0 && this.slots.has(slotKey(agentType, instanceId));
  }

  /** The write's answer, or null when `maxWrites` instances already have a write in flight. */
  heartbeat(agentType: string, instanceId: string, msg: HeartbeatMessage): Promise<R> | null {
    const key = slotKey(agentType, instanceId);
    const slot = this.slots.get(key);
    if (slot === undefined) {
      if (this.slots.size >= this.maxWrites) return null;
      const own: Slot<R> = { next: null };
      this.slots.set(key, own);
      return this.run(key, own, agentType, instanceId, msg);
    }
    return new Promise<R>((resolve, reject) => {
      if (slot.next === null) slot.next = { msg: { ...msg }, waiters: [] };
      else {
        if (msg.status !== undefined) slot.next.msg.status = msg.status;
        if (msg.active_tasks !== undefined) slot.next.msg.active_tasks = msg.active_tasks;
      }
      slot.next.waiters.push({ resolve, reject });
    });
  }

  /** The write, then whatever joined meanwhile; no async frame of its own on the hot path. */
  private run(key: string, slot: Slot<R>, agentType: string, instanceId: string, msg: HeartbeatMessage): Promise<R> {
    const written = this.write(agentType, instanceId, msg);
    const next = (): void => this.continueWith(key, slot, agentType, instanceId);
    written.then(next, next);
    return written;
  }

  /** Starts the write that joined meanwhile, or frees the slot. */
  private continueWith(key: string, slot: Slot<R>, agentType: string, instanceId: string): void {
    const next = slot.next;
    if (next === null) {
      this.slots.delete(key);
      return;
    }
    slot.next = null;
    this.run(key, slot, agentType, instanceId, next.msg).then(
      (r) => {
        for (const w of next.waiters) w.resolve(r);
      },
      (e: unknown) => {
        for (const w of next.waiters) w.reject(e);
      },
    );
  }
}

/** Agent types have no NUL, so the key is unambiguous. */
const slotKey = (agentType: string, instanceId: string): string => `${agentType}\u0000${instanceId}`;
