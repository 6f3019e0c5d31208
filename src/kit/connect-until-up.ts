/**
 * The first connection to NATS, for the registry and the fronts that must wait for their
 * cluster (the audit mirror): tried again until a server answers or the caller gives up.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { ConnectionOptions, NatsConnection } from "@nats-io/nats-core";
import { connect as natsConnect } from "@nats-io/transport-node";
import type { Logger } from "./logger.js";
import { redactUrls } from "./log-redaction.js";

/** The first reconnect wait, doubled after each failure up to the last. */
export const FIRST_CONNECT_RETRY_MS = [500, 1000, 2000, 5000] as const;

/**
 * Connects, trying again until a server answers or `signal` aborts. A replica started before
 * its NATS cluster (compose, k8s) keeps trying instead of exiting; /healthz answers meanwhile
 * and /readyz says why it is not ready. Our own loop rather than nats.js's `waitOnFirstConnect`:
 * that one cannot be cancelled (a SIGTERM during it left the process running) and says nothing
 * while it fails, where each failed attempt here is an info line naming the servers and why.
 * Once connected, nats.js reconnects by itself.
 */
export async function connectUntilUp(
  options: ConnectionOptions,
  deps: { signal: AbortSignal; log: Logger; connect?: (o: ConnectionOptions) => Promise<NatsConnection> },
): Promise<NatsConnection> {
  const connect = deps.connect ?? natsConnect;
  // As logged: a server URL may carry a password or token in its user info.
  const servers = redactUrls([options.servers ?? []].flat().join(","));
  for (let attempt = 1; ; attempt++) {
    deps.signal.throwIfAborted();
    try {
      const nc = await connect({ ...options, waitOnFirstConnect: false });
      if (deps.signal.aborted) {
        await nc.close();
        deps.signal.throwIfAborted();
      }
      if (attempt > 1) deps.log.info({ servers, attempts: attempt }, "connected to NATS after retrying");
      return nc;
    } catch (err) {
      deps.signal.throwIfAborted();
      const waitMs = FIRST_CONNECT_RETRY_MS[Math.min(attempt, FIRST_CONNECT_RETRY_MS.length) - 1]!;
      const reason = err instanceof Error ? err.message : String(err);
      deps.log.info({ servers, attempt, retry_in_ms: waitMs, reason }, `cannot connect to NATS yet (${reason}); retrying`);
      await sleep(waitMs, undefined, { signal: deps.signal }).catch(() => deps.signal.throwIfAborted());
    }
  }
}
