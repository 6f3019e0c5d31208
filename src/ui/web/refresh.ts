/**
 * Re-reads on events without flooding the registry: at most one read in flight, the events
 * that arrive during it folded into one more read, and reads at least `gapMs` apart. A busy
 * fleet then costs each open page a few queries a second, and a change still shows within one.
 */
export function coalesced(read: () => Promise<void>, gapMs = 300): () => void {
  let running = false;
  let pending = false;
  let lastStart = -Infinity;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = (): void => {
    timer = undefined;
    running = true;
    pending = false;
    lastStart = performance.now();
    read()
      .catch(() => undefined) // each view shows its own errors
      .finally(() => {
        running = false;
        if (pending) schedule();
      });
  };
  const schedule = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(run, Math.max(0, lastStart + gapMs - performance.now()));
  };
  return () => {
    if (running) pending = true;
    else schedule();
  };
}
