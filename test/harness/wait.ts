/**
 * Poll for a condition with a deadline: tests wait for what they need, never a fixed time.
 */
export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  message?: string;
}

/**
 * Resolves once `condition` returns true. A condition that throws counts as "not yet";
 * its last error is reported (as the cause) if the deadline passes.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, intervalMs = 50, message = "condition was not met" }: WaitForOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await condition()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = lastError === undefined ? "" : ` (last error: ${String(lastError)})`;
      throw new Error(`waitFor timed out after ${timeoutMs} ms: ${message}${detail}`, { cause: lastError });
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Like waitFor, but returns the first value `attempt` produces without throwing. */
export async function retryUntil<T>(attempt: () => Promise<T>, opts: WaitForOptions = {}): Promise<T> {
  let result: { value: T } | undefined;
  await waitFor(async () => {
    result = { value: await attempt() };
    return true;
  }, opts);
  return (result as { value: T }).value;
}
