/**
 * Follows a service connection's status events: metrics (the API connection's) and logs for disconnects,
 * reconnects, lame-duck mode and errors, a hook on reconnect (the view feed restarts its watch
 * at once rather than waiting ~10 s for missed consumer heartbeats), one on a final close, and
 * one when the server takes a subscription away (a permissions change reloaded into the
 * server): nats.js does not close a queue subscription it cannot match to the server's error,
 * so without this an API endpoint could go deaf while the replica still reported itself ready.
 */
import { errors, type NatsConnection } from "@nats-io/nats-core";
import type { RegistryMetrics } from "../http/metrics.js";
import type { Logger } from "../../kit/logger.js";

export type ConnectionHooks = {
  onUp?: (up: boolean) => void;
  onReconnect?: () => void;
  onClosed: (err: Error | void) => void;
  onSubscriptionDenied?: (subject: string, err: Error) => void;
};

/** `metrics` only for the API connection: the gauges say whether the replica can serve. */
export function monitorConnection(conn: NatsConnection, log: Logger, hooks: ConnectionHooks, metrics?: Pick<RegistryMetrics, "natsConnected" | "natsReconnects">): void {
  const up = (value: boolean): void => {
    metrics?.natsConnected.set(value ? 1 : 0);
    hooks.onUp?.(value);
  };
  up(true);
  void (async () => {
    for await (const s of conn.status()) {
      switch (s.type) {
        case "disconnect":
          up(false);
          log.warn({ server: "server" in s ? s.server : undefined }, "NATS disconnected");
          break;
        case "reconnect":
          up(true);
          metrics?.natsReconnects.inc();
          log.info("NATS reconnected");
          hooks.onReconnect?.();
          break;
        case "ldm":
          log.warn("NATS server entering lame-duck mode");
          break;
        case "error": {
          const err = "error" in s ? s.error : undefined;
          log.error({ err }, "NATS error");
          if (err instanceof errors.PermissionViolationError && err.operation === "subscription") hooks.onSubscriptionDenied?.(err.subject, err);
          break;
        }
        default:
          break;
      }
    }
  })();
  void conn.closed().then((err) => {
    up(false);
    hooks.onClosed(err);
  });
}
