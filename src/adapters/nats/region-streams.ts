/**
 * What regional mode asks of JetStream (docs/architecture.md, "Regions"): a region's stores are
 * placed in its own cluster, and its events are stored under subjects of its own. One JetStream
 * account spans the whole supercluster and refuses two streams whose subjects overlap, so the
 * regions cannot all store `<prefix>.agent.>`: a region stores `_region.<region>.<prefix>.agent.>`
 * and the stream republishes each stored event on its usual subject for live watchers.
 */
import type { Placement, Republish } from "@nats-io/jetstream";
import semver from "semver";

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

/** Where a region stores an event published on `subject`. */
export const regionStoredSubject = (region: string, subject: string): string => `${regionSubjectRoot(region)}.${subject}`;

/** The region stream's subjects, and the republish that puts each stored event back on its usual subject. */
export function regionEventSubjects(region: string, prefix: string, storedEvents: readonly string[]): { subjects: string[]; republish: Republish } {
  const root = regionSubjectRoot(region);
  return {
    subjects: storedEvents.map((s) => `${root}.${s}`),
    republish: { src: `${root}.${prefix}.>`, dest: `${prefix}.>` },
  };
}
