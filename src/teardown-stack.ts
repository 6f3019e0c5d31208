/**
 * The closes of what a start has opened so far, run last in first out (as fastify's onClose
 * hooks and nats.js's closed() promises are). Each start step registers its own close as soon
 * as the thing it opened exists, so a stop, or a start that fails half-way, closes exactly
 * what is open, in the reverse order of opening, without a hand-written stop() to keep in step.
 */
import type { Logger } from "./kit/logger.js";

type Close = { readonly name: string; readonly run: () => unknown };

export class TeardownStack {
  private readonly closes: Close[] = [];

  constructor(private readonly log: Logger) {}

  /** Registers the close of something just opened; `name` says what, in the log if it fails. */
  defer(name: string, run: () => unknown): void {
    this.closes.push({ name, run });
  }

  get size(): number {
    return this.closes.length;
  }

  /**
   * Runs every registered close, newest first, each once. A close that throws is logged and the
   * rest still run; a close registered while this runs (a start step finishing late) runs too.
   */
  async run(): Promise<void> {
    for (let close = this.closes.pop(); close; close = this.closes.pop()) {
      try {
        await close.run();
      } catch (err) {
        this.log.warn({ err, step: close.name }, `${close.name} failed during shutdown`);
      }
    }
  }
}
