/**
 * The fault tests' witness of evictions: every tombstone written to the bucket, watched on the
 * KV itself rather than through the registry under test, timed on this process's clock as it
 * arrives. Watching from the test's own connection means a registry that evicts wrongly cannot
 * also hide it.
 */
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/nats-core";

export type SeenTombstone = {
  /** The instance id (the key's last token). */
  readonly id: string;
  /** The record's own stamp: the evicting replica's clock. */
  readonly at: number;
  readonly reason: string;
  /** When this watch received it, on this process's clock. */
  readonly seenAt: number;
};

export type TombstoneWatch = {
  /** The first tombstone of each key (`instances.<type>.<id>`). */
  readonly first: ReadonlyMap<string, SeenTombstone>;
  /** The key of every tombstone written, in order: a key twice is two tombstones. */
  readonly keys: readonly string[];
  stop(): void;
};

export async function watchTombstones(nc: NatsConnection, bucket: string): Promise<TombstoneWatch> {
  const kv = await new Kvm(nc).open(bucket);
  const watch = await kv.watch({ key: "instances.>" });
  const first = new Map<string, SeenTombstone>();
  const keys: string[] = [];
  void (async () => {
    for await (const e of watch) {
      if (e.operation !== "PUT") continue;
      const r = e.json<{ kind: string; at?: number; reason?: string }>();
      if (r.kind !== "gone") continue;
      keys.push(e.key);
      if (!first.has(e.key)) first.set(e.key, { id: e.key.split(".").pop()!, at: r.at ?? 0, reason: r.reason ?? "", seenAt: Date.now() });
    }
  })();
  return { first, keys, stop: () => watch.stop() };
}
