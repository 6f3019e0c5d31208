/**
 * Regional mode (docs/operations.md, "Running regions"): a replica names its home region, which
 * is also the name of the NATS cluster it connects to, and the regions of the supercluster.
 * Each region keeps its own bucket and events stream, named here from the configured base names,
 * so the regions' stores never share a name or a subject in the one JetStream account.
 */

/** A region's name: a cluster name that is also one token of a subject, a bucket and a stream name. */
export const REGION_NAME = /^[A-Za-z0-9_-]+$/;

type RegionSettings = { readonly region?: string | undefined; readonly regions?: readonly string[] | undefined };
type StoreSettings = RegionSettings & { readonly bucket: string; readonly eventsStream: string };

/** What is wrong with the pair of region settings, in a sentence naming them; null when they fit. */
export function regionSettingsProblem({ region, regions = [] }: RegionSettings): string | null {
  const bad = [region, ...regions].find((r) => r !== undefined && !REGION_NAME.test(r));
  if (bad !== undefined) return `region "${bad}" is not a region name (letters, digits, - and _)`;
  if (regions.length > 0 && region === undefined) return "REGISTRY_REGIONS needs REGISTRY_REGION, the region of this replica";
  if (region !== undefined && regions.length > 0 && !regions.includes(region)) return `REGISTRY_REGIONS (${regions.join(",")}) does not name REGISTRY_REGION (${region})`;
  if (new Set(regions).size !== regions.length) return `REGISTRY_REGIONS names a region twice (${regions.join(",")})`;
  return null;
}

/** The bucket of a region: the configured bucket's name with the region after it. */
export const regionBucket = (bucket: string, region: string): string => `${bucket}-${region}`;
/** The events stream of a region: the configured stream's name with the region after it. */
export const regionEventsStream = (stream: string, region: string): string => `${stream}_${region}`;

/** The bucket and events stream this replica writes: its region's in regional mode, else the configured ones. */
export function storeNames(c: StoreSettings): { bucket: string; eventsStream: string } {
  if (c.region === undefined) return { bucket: c.bucket, eventsStream: c.eventsStream };
  return { bucket: regionBucket(c.bucket, c.region), eventsStream: regionEventsStream(c.eventsStream, c.region) };
}

/** The stream in `region` holding every region's events on their usual subjects (sourced from each region's stream). */
export const globalEventsStream = (eventsStream: string, region: string): string => `${eventsStream}_all_in_${region}`;

/**
 * The stream a reader of events on their usual subjects follows (the web page, the audit mirror
 * beside the registry): the configured one, or in regional mode the region's global stream, as
 * the region's own stream stores its events under `_region.<region>.` subjects, and an operator
 * watching a region wants every region's events, each carrying its `region`.
 */
export function eventsReadStream(c: StoreSettings): string {
  return c.region === undefined ? c.eventsStream : globalEventsStream(c.eventsStream, c.region);
}

/** The other regions of the supercluster, in the order configured. */
export function peerRegions({ region, regions = [] }: RegionSettings): string[] {
  return regions.filter((r) => r !== region);
}
