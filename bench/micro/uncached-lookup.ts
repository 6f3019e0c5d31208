/**
 * A lookup the reply cache does not hold, in one process, against the same lookup served from
 * the cache in the same run: `npx tsx bench/micro/uncached-lookup.ts [agent types]`.
 *
 * The `lookup` scenarios send 4,096 distinct bodies, so after their first second every reply
 * comes from the cache (lookup-cache.ts). A real fleet's lookups miss it after every change to
 * a provider of the capability (a registration, an instance joining or leaving, a status
 * change), and then the full path runs: the query checked, the providers found, sorted and
 * serialized. This measures that path alone, without NATS, on the benchmark fleet's specs
 * (bench/lib/specs.ts: 3 providers a capability, replies of about 2.7 KB).
 */
import { RegistryView } from "../../src/domain/view/view.js";
import { agentKey, encodeRecord, instanceKey } from "../../src/domain/model/records.js";
import { QueryService } from "../../src/service/queries/queries.js";
import { capabilityCount, capabilityName, storedSpec, type FleetShape } from "../lib/specs.js";

const types = Number(process.argv[2] ?? 3000);
const shape: FleetShape = { types, capsPerType: 4, providersPerCap: 3 };
const lookups = 20_000;
const rounds = 5;

const view = new RegistryView();
let revision = 0;
for (let t = 0; t < types; t++) {
  const spec = storedSpec(t, shape);
  view.apply({ key: agentKey(spec.agent_type), revision: ++revision, operation: "PUT", created: 0, value: encodeRecord({ kind: "agent", spec, registered_at: t, updated_at: t }) });
  const instance = { kind: "instance", version: spec.version, status: "ready", registered_at: t, last_heartbeat: t, heartbeat_interval_ms: 30_000, active_tasks: 0, metadata: {}, spec_changed: false } as const;
  view.apply({ key: instanceKey(spec.agent_type, "i1"), revision: ++revision, operation: "PUT", created: 0, value: encodeRecord(instance) });
}
const queries = new QueryService(view, async () => "reached" as const);
const capabilities = capabilityCount(shape);
const enc = new TextEncoder();

/** Microseconds per lookup over `n` capabilities in a fixed spread order, and the mean reply size. */
async function measure(n: number, cached: boolean): Promise<{ us: number; bytes: number }> {
  let bytes = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const text = `{"capability":"${capabilityName((i * 7919) % capabilities)}"}`;
    const data = enc.encode(text);
    if (!cached) queries.lookupCache.clear();
    const reply = queries.cachedLookup(data, null) ?? (await queries.run("lookup", JSON.parse(text) as Record<string, unknown>, null, data));
    bytes += (reply as Uint8Array).length;
  }
  return { us: Number(process.hrtime.bigint() - start) / 1000 / n, bytes: bytes / n };
}

console.log(`${types} agent types, ${capabilities} capabilities, ${lookups} lookups a round`);
for (let r = 1; r <= rounds; r++) {
  const uncached = await measure(lookups, false);
  await measure(capabilities, true); // every reply into the cache
  const cached = await measure(lookups, true);
  console.log(`round ${r}: not cached ${uncached.us.toFixed(1)} µs, cached ${cached.us.toFixed(2)} µs (${(uncached.us / cached.us).toFixed(0)} x), replies ${uncached.bytes.toFixed(0)} B`);
}
