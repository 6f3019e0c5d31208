/**
 * What regional mode asks of JetStream (docs/architecture.md, "Regions"): a region's stores are
 * placed in its own cluster, and its events are stored under subjects of its own. One JetStream
 * account spans the whole supercluster and refuses two streams whose subjects overlap, so the
 * regions cannot all store `<prefix>.agent.>`: a region stores `_region.<region>.<prefix>.agent.>`
 * and the stream republishes each stored event on its usual subject for live watchers.
 */
import { DiscardPolicy, RetentionPolicy, StorageType, jetstreamManager, type Placement, type Republish } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/nats-core";
import semver from "semver";
import { globalEventsStream } from "../../config/region.js";

/** Subject transforms on stream sources (what the global view is built from) came in 2.10. */
export const REGIONS_MIN_SERVER_VERSION = "2.10.0";

/**
 * Why this server cannot carry regional mode, in one line; null when it can. The replica must
 * connect to its own region's cluster: its stores are placed there, and its queue subscriptions
 * answer the agents connected there (gateways prefer a local queue subscriber).
 */
export function regionalServerProblem(region: string, server: { version: string; cluster: string | undefined }): string | null {
  const v = semver.coerce(server.version)?.version;
  if (v === undefined || semver.lt(v, REGIONS_MIN_SERVER_VERSION)) {
    return `regional mode (REGISTRY_REGION=${region}) needs nats-server ${REGIONS_MIN_SERVER_VERSION} or newer (stream sources with subject transforms); this server is ${server.version}: upgrade it, or unset REGISTRY_REGION for one registry without regions`;
  }
  if (server.cluster !== region) {
    const where = server.cluster === undefined ? "in no cluster" : `in cluster "${server.cluster}"`;
    return `regional mode (REGISTRY_REGION=${region}) needs a server of the NATS cluster named "${region}"; this server is ${where}: name each region's cluster after the region and connect the region's replicas to it`;
  }
  return null;
}

/** The start refuses regional mode on this server; the message is the whole explanation. */
export class RegionalServerError extends Error {
  override readonly name = "RegionalServerError";
}

/** JetStream placement in a region's cluster. */
export const inRegion = (region: string): Placement => ({ cluster: region, tags: [] });

/** The token in front of a region's stored event subjects. */
export const regionSubjectRoot = (region: string): string => `_region.${region}`;

/** Where a replica stores an event published on `subject`: under its region's root, or as is outside regional mode. */
export const regionStoredSubject = (region: string | undefined, subject: string): string => (region === undefined ? subject : `${regionSubjectRoot(region)}.${subject}`);

/** The region stream's subjects, and the republish that puts each stored event back on its usual subject. */
export function regionEventSubjects(region: string, prefix: string, storedEvents: readonly string[]): { subjects: string[]; republish: Republish } {
  const root = regionSubjectRoot(region);
  return {
    subjects: storedEvents.map((s) => `${root}.${s}`),
    republish: { src: `${root}.${prefix}.>`, dest: `${prefix}.>` },
  };
}

export type GlobalEventsSettings = { eventsStream: string; region: string; regions: readonly string[]; prefix: string; replicas: number; maxAgeMs: number; maxBytes: number; timeoutMs: number };

/**
 * Creates (if missing) this region's global events stream: sourced from every region's events
 * stream, the subject transform putting each event back on its usual subject, placed here. It has
 * no subjects of its own, so it overlaps no region's stream; each source is followed from where
 * it stopped, so after a partition every region's events arrive once, in each region's order.
 */
export async function openGlobalEvents(nc: NatsConnection, s: GlobalEventsSettings): Promise<{ name: string; created: boolean }> {
  const jsm = await jetstreamManager(nc, { timeout: s.timeoutMs });
  const name = globalEventsStream(s.eventsStream, s.region);
  try {
    await jsm.streams.info(name);
    return { name, created: false };
  } catch (e) {
    if (!(e instanceof Error && /stream not found/i.test(e.message))) throw e;
  }
  await jsm.streams.add({
    name,
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    num_replicas: s.replicas,
    max_age: s.maxAgeMs * 1e6,
    max_bytes: s.maxBytes > 0 ? s.maxBytes : -1,
    placement: inRegion(s.region),
    sources: s.regions.map((r) => ({
      name: `${s.eventsStream}_${r}`,
      subject_transforms: [{ src: `${regionSubjectRoot(r)}.${s.prefix}.>`, dest: `${s.prefix}.>` }],
    })),
    description: `agent-registry: every region's events, as region ${s.region} holds them`,
  });
  return { name, created: true };
}
