/**
 * Lets a long pass over the fleet give the event loop back every so many items, so the
 * heartbeats and lookups that arrive meanwhile are answered between slices rather than after
 * the whole pass. The evictor's retention sweep over 10,000 agent types held the loop for
 * 20-29 ms every 30 s at 100,000 instances (issue 14, the fleet benchmark's p99).
 */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A function to await once per item: it yields a turn of the loop after every `every` calls. */
export function loopPacer(every: number): () => Promise<void> | undefined {
  let n = 0;
  return () => (++n % every === 0 ? nextTurn() : undefined);
}
