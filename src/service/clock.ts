/** The clock port: time comes in from here, so tests can pass a manual clock. */
export type Clock = { now(): number };
export const systemClock: Clock = { now: () => Date.now() };
