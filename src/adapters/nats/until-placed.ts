/**
 * Opening (or creating) the bucket and the events stream while a JetStream cluster is still
 * forming. nats-server answers a replicated create with "no suitable peers for placement"
 * (10005) until enough servers have joined the meta group, with "JetStream system temporarily
 * unavailable" (10008) or a member-change error (10202) while it elects, and not at all (a
 * timeout) while there is no meta leader. A replica started beside its cluster (compose, k8s)
 * would exit on any of these and be restarted in a loop; it waits instead, as it does for the
 * first connection (connectUntilUp), with a warning each time that says why. Any other error
 * (permissions, a bad setting) fails the start at once: waiting would not mend it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { JetStreamApiError } from "@nats-io/jetstream";
import { RequestError, TimeoutError } from "@nats-io/nats-core";
import type { Logger } from "../../kit/logger.js";

/** The wait after each failed attempt, the last repeated. */
export const PLACEMENT_RETRY_MS = [250, 500, 1000, 2000, 5000] as const;

const NO_SUITABLE_PEERS = 10005;
const CLUSTER_NOT_AVAILABLE = 10008;
const MEMBER_CHANGE_IN_FLIGHT = 10202;

/**
 * Why `err` may clear by itself while the cluster forms, in words for the operator, or null
 * when it will not. 10005 is also what a permanent mistake returns (more replicas than servers
 * with JetStream), which no wait mends: the words name both, and the wait goes on, as a
 * replica's first connection does for a server that never comes.
 */
export function formingReason(err: unknown, replicas: number): string | null {
  if (err instanceof JetStreamApiError) {
    switch (err.code) {
      case NO_SUITABLE_PEERS:
        return (
          `${err.message}: the cluster may still be forming, or fewer than ${replicas} servers ` +
          `with JetStream can ever join it (REGISTRY_REPLICAS=${replicas})`
        );
      case CLUSTER_NOT_AVAILABLE:
      case MEMBER_CHANGE_IN_FLIGHT:
        return `${err.message}: the cluster is electing its JetStream leader`;
      default:
        return null;
    }
  }
  const timedOut = err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError);
  return timedOut ? "no answer from the JetStream API: the cluster may have no JetStream leader yet" : null;
}

export type UntilPlacedDeps = {
  signal: AbortSignal;
  log: Logger;
  replicas: number;
  /** Told each reason the start waits for (/readyz shows it). */
  onWait?: (reason: string) => void;
  /** Tests shorten the waits. */
  waitsMs?: readonly number[];
};

/** Runs `open` until it succeeds, fails for a reason waiting will not mend, or `signal` aborts. */
export async function untilPlaced<T>(what: string, open: () => Promise<T>, deps: UntilPlacedDeps): Promise<T> {
  const waits = deps.waitsMs ?? PLACEMENT_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    deps.signal.throwIfAborted();
    try {
      const opened = await open();
      if (attempt > 1) deps.log.info({ attempts: attempt }, `opened ${what} after waiting for the JetStream cluster`);
      return opened;
    } catch (err) {
      deps.signal.throwIfAborted();
      const reason = formingReason(err, deps.replicas);
      if (reason === null) throw err;
      deps.onWait?.(reason);
      const waitMs = waits[Math.min(attempt, waits.length) - 1]!;
      deps.log.warn({ attempt, retry_in_ms: waitMs, reason }, `cannot open ${what} yet (${reason}); retrying`);
      await sleep(waitMs, undefined, { signal: deps.signal }).catch(() => deps.signal.throwIfAborted());
    }
  }
}
