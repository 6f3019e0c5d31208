/**
 * A registration whose capability schemas go through a deep chain of `$ref`s, against the
 * same registration with the schemas written out, in one process and the same run:
 * `npx tsx bench/micro/ref-chain-registration.ts [chain depth] [rounds]`.
 *
 * Issue 35, item 6: 256 capabilities whose schemas refer to one 250-deep chain of named
 * schemas cost 0.3-0.45 s a registration, all of it resolving the refs again for every
 * schema. Each registration here is of a new agent type (no spec admitted before), on the
 * in-memory store, with schemas compiled in process (their verdicts cached after the first
 * round, as in service): what differs between the two is the refs. The figure is the ratio
 * of the two means; 1.0 is a chain that costs nothing.
 */
import { MemoryStore } from "../../src/adapters/memory/memory-store.js";
import { encodeSchemaRecord } from "../../src/domain/schemas/schema-record.js";
import { schemaKey } from "../../src/domain/model/records.js";
import { RegistryView } from "../../src/domain/view/view.js";
import { Registrar } from "../../src/service/registration/registrar.js";
import { InlineSchemaChecks } from "../../src/service/registration/schema-checks.js";

const depth = Number(process.argv[2] ?? 250);
const rounds = Number(process.argv[3] ?? 10);
const CAPABILITIES = 256;
const LEAF = { type: "object", properties: { text: { type: "string", maxLength: 1000 } }, required: ["text"] };

const view = new RegistryView();
for (let i = 0; i < depth; i++) {
  const schema = i === depth - 1 ? LEAF : { $ref: `#Link${i + 1}:1.0.0` };
  view.apply({ key: schemaKey(`Link${i}`, "1.0.0"), revision: i + 1, operation: "PUT", created: 0, value: encodeSchemaRecord({ kind: "schema", name: `Link${i}`, version: "1.0.0", schema, description: "", created_at: 0 }) });
}
const registrar = new Registrar({
  store: new MemoryStore(),
  view,
  checker: new InlineSchemaChecks(),
  clock: { now: () => Date.now() },
  settings: {
    missedHeartbeats: 3,
    defaultHeartbeatIntervalMs: 30_000,
    minHeartbeatIntervalMs: 1000,
    maxHeartbeatIntervalMs: 3_600_000,
    duplicateCapabilities: "allow",
    heartbeatSubject: (t, i) => `registry.heartbeat.${t}.${i}`,
    prefix: "registry",
    bucketMaxBytes: 0,
    maxMetadataBytes: 16384,
    maxInstancesPerType: 100_000,
    maxTypesPerTenant: 100_000,
  },
});

/** A spec of 256 capabilities: input the schema, output an object holding it. */
function spec(type: string, schema: unknown) {
  return {
    agent_type: type,
    version: "1.0.0",
    description: "",
    owner_team: "bench",
    nats_subject: `tasks.${type}`,
    consumer_group: type,
    capabilities: Array.from({ length: CAPABILITIES }, (_, i) => ({ name: `${type}.c${i}`, description: "", input_schema: schema, output_schema: { type: "object", properties: { result: schema } } })),
  };
}

let n = 0;
/** Mean milliseconds of one registration of a new type whose schemas are `schema`. */
async function registerMs(kind: string, schema: unknown, count: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const type = `${kind}-${n++}`;
    await registrar.register(type, { spec: spec(type, schema) });
  }
  return (performance.now() - started) / count;
}

console.log(`${CAPABILITIES} capabilities, each schema through a chain of ${depth} refs, against the same written out`);
await registerMs("warm", LEAF, 3);
await registerMs("warm", { $ref: "#Link0:1.0.0" }, 3);
for (let r = 1; r <= rounds; r++) {
  const flat = await registerMs("flat", LEAF, 5);
  const chained = await registerMs("chain", { $ref: "#Link0:1.0.0" }, 5);
  console.log(`round ${r}: written out ${flat.toFixed(1)} ms, through the chain ${chained.toFixed(1)} ms (${(chained / flat).toFixed(2)} x)`);
}
