/** The clock port (domain/ports.ts): time comes in from here, so tests can pass a manual clock. */
import type { Clock } from "../domain/ports.js";

export type { Clock };
export const systemClock: Clock = { now: () => Date.now() };
