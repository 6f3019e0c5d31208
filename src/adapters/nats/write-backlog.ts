/**
 * What the NATS connection has been asked to send and has not yet handed to the kernel, and a
 * publish for best-effort messages that gives way to it.
 *
 * nats.js v3 writes every publish to its socket at once and never waits for the socket to
 * drain, so when nats-server reads the registry's output more slowly than the registry writes
 * it, the difference piles up in the process. A million instances heartbeating on a 2-core
 * machine (fleet-1m, docs/performance.md) did exactly that: nats-server, short of CPU, read
 * about 16 MB/s of the registry's replies and heartbeat events, the registry wrote about twice
 * that, and in five minutes 3.7 GB of writes were queued on the socket; every reply behind them
 * came seconds after its requester gave up. Heartbeat events are core NATS, at most once by
 * design (PROTOCOL.md section 5, not stored): published through `giveWayPublisher`, they are
 * dropped, and counted, while the backlog is over its bound, and the replies get the socket;
 * past a second bound heartbeat replies are dropped as well (REPLY_BACKLOG_LIMIT_BYTES).
 *
 * The backlog is read from the node transport's socket (`writableLength`), which nats.js does
 * not expose: the packages are pinned (package.json), and test/fault/write-backlog.test.ts
 * holds this reading to a real connection whose server stopped reading. Where the shape is not
 * there (another transport, a changed nats.js), the backlog reads 0 and nothing is dropped.
 */

/** At about 30 MB/s of output (fleet-1m's rate), a quarter of a second behind. */
export const WRITE_BACKLOG_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * Past this, heartbeat replies are dropped too (endpoints.ts): in fleet-1m's overload the replies
 * alone outran nats-server, the backlog reached 387 MB, and the lease's renewals, queued behind
 * it on the same socket, timed out, so the replica lost its lease and evicted nobody. At the
 * 16 MB/s nats-server read there, 16 MiB is about a second: well inside the lease's 3.3 s.
 */
export const REPLY_BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;

/** The part of a nats.js connection this needs: `publish`, and whatever its internals hold. */
type Publishing = { publish(subject: string, payload?: Uint8Array): void };

/** Bytes queued on the connection's socket now; 0 when it cannot be read. A property chain: cheap enough per message. */
export function writeBacklogBytes(nc: object): number {
  const queued = socketOf(nc)?.writableLength;
  return typeof queued === "number" ? queued : 0;
}

/** Whether this connection's backlog can be read at all (checked once at start, for the log). */
export function canReadWriteBacklog(nc: object): boolean {
  return typeof socketOf(nc)?.writableLength === "number";
}

/**
 * nats.js NatsConnectionImpl -> ProtocolHandler -> NodeTransport -> net.Socket; each may be
 * absent between a disconnect and the next connect (a new transport per connection).
 */
function socketOf(nc: object): { writableLength?: unknown } | undefined {
  return (nc as { protocol?: { transport?: { socket?: { writableLength?: unknown } } } }).protocol?.transport?.socket;
}

/**
 * A publish that drops its message, and calls `onDropped`, while more than `limitBytes` wait on
 * the socket. Only for messages a subscriber must already expect to miss (core NATS events).
 */
export function giveWayPublisher(nc: Publishing, onDropped: () => void, limitBytes = WRITE_BACKLOG_LIMIT_BYTES): (subject: string, payload: Uint8Array) => void {
  return (subject, payload) => {
    if (writeBacklogBytes(nc) > limitBytes) {
      onDropped();
      return;
    }
    nc.publish(subject, payload);
  };
}
