/**
 * Tells the MCP server when the capability projection changed: a core NATS subscription to the
 * registry's `<prefix>.capability.changed.>` events (PROTOCOL.md section 5), which fire when a
 * capability's set of ready providers or its schema changes. A burst of them (a fleet starting)
 * becomes one call per quiet period, since a client re-reads the whole projection each time.
 * Core NATS, not a JetStream consumer: nothing is replayed (a client reads the resource when it
 * subscribes) and the MCP server's user needs only subscribe rights on those subjects.
 */
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { permissionDenied } from "../client/errors.js";
import { EventType } from "../protocol/events.js";
import type { Subjects } from "../protocol/subjects.js";
import type { Logger } from "../kit/logger.js";

/** Quiet time before the changes seen are reported: a fleet starting sends dozens within it. */
export const CHANGE_QUIET_MS = 100;
/** The longest a change waits for a quiet moment: under a steady stream of changes, clients still hear of them. */
export const CHANGE_MAX_WAIT_MS = 1000;

export type CapabilityWatch = { readonly subject: string; stop(): void };

/**
 * Coalesces changes: `onFire` runs once `quietMs` pass without one, or `maxWaitMs` after the
 * first change not yet reported, whichever comes first. Without the bound, changes arriving
 * more often than every `quietMs` postponed the report for as long as they kept coming.
 */
export function coalesceChanges(onFire: () => void, quietMs: number, maxWaitMs: number): { changed(): void; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let pendingSince = 0;
  const fire = () => {
    timer = undefined;
    onFire();
  };
  return {
    changed() {
      const now = Date.now();
      if (timer === undefined) pendingSince = now;
      else clearTimeout(timer);
      timer = setTimeout(fire, Math.max(0, Math.min(quietMs, pendingSince + maxWaitMs - now)));
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}

export function watchCapabilityChanges(
  nc: NatsConnection,
  subjects: Subjects,
  onChange: () => void,
  log: Logger,
  quietMs = CHANGE_QUIET_MS,
  maxWaitMs = CHANGE_MAX_WAIT_MS,
): CapabilityWatch {
  const subject = subjects.event(EventType.CapabilityChanged, ">");
  const changes = coalesceChanges(onChange, quietMs, maxWaitMs);
  const sub: Subscription = nc.subscribe(subject, {
    callback: (err) => {
      if (err) return;
      changes.changed();
    },
  });
  // A user without subscribe rights on the events loses the notifications, not the server.
  sub.closed
    .then((err) => {
      if (!err) return;
      const denied = permissionDenied(err);
      log.warn(
        { err, subject },
        denied
          ? `no resource update notifications: this NATS user may not subscribe to ${subject}`
          : "the capability event subscription ended; no resource update notifications",
      );
    })
    .catch(() => undefined);
  return {
    subject,
    stop() {
      changes.stop();
      sub.unsubscribe();
    },
  };
}
