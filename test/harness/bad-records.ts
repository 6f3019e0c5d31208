/**
 * fast-check arbitraries of bucket entries the registry cannot read (issue 14): random bytes,
 * random JSON, records of an unknown kind or a newer format, and valid records with one field
 * given a value of the wrong type, under keys `agents.<type>` and `instances.<type>.<id>` (and
 * keys that break the token rules). Every entry is unreadable by construction, so a test can
 * expect the registry's counter to equal the number written.
 */
import fc from "fast-check";
import { spec } from "./registry.js";

export type BadRecord = { key: string; value: Uint8Array; label: string };

const enc = new TextEncoder();

/** A record the registry would have written for `type`, before the mutation. */
export function agentRecord(type: string): Record<string, any> {
  const s = spec(type);
  return {
    kind: "agent",
    spec: {
      ...s,
      supported_patterns: ["coordinator_managed"],
      max_concurrent_tasks: 10,
      task_timeout_ms: 60000,
      llm_timeout_ms: 30000,
      max_retries: 3,
      reflection_config: null,
      evaluators: [],
      tools: [],
      tenant_scope: null,
      tags: { k: "v" },
      weight: 1,
      capabilities: [{ ...(s["capabilities"] as object[])[0], tags: ["t"], examples: [] }],
    },
    registered_at: 1,
    updated_at: 1,
  };
}

export function liveRecord(): Record<string, any> {
  return { kind: "instance", version: "1.0.0", status: "ready", registered_at: 1, last_heartbeat: 1, heartbeat_interval_ms: 60000, active_tasks: 0, metadata: {}, spec_changed: false };
}

const goneRecord = (): Record<string, any> => ({ kind: "gone", version: "1.0.0", reason: "graceful", at: 1, registered_at: 1, last_heartbeat: 1 });

/** [path, values of the wrong type for it]; `undefined` removes a required field. */
const AGENT_MUTATIONS: Array<[Array<string | number>, unknown[]]> = [
  [["spec", "capabilities"], ["abc", {}, 5, null]],
  [["spec", "capabilities", 0], ["abc", null, []]],
  [["spec", "capabilities", 0, "tags"], ["x", 1, null, [1]]],
  [["spec", "capabilities", 0, "examples"], [{}, "x"]],
  [["spec", "capabilities", 0, "name"], [1, null, [], undefined]],
  [["spec", "capabilities", 0, "input_schema"], ["x", 1, null, []]],
  [["spec", "capabilities", 0, "confidence_hint"], ["high", []]],
  [["spec", "tags"], [[], "x", null]],
  [["spec", "tags", "k"], [1, {}, null]],
  [["spec", "version"], ["not-semver", 1, undefined]],
  [["spec", "agent_type"], ["someone-else", 1, undefined]],
  [["spec", "tenant_scope"], [1, [], {}]],
  [["spec", "weight"], ["1", null, undefined]],
  [["spec", "reflection_config"], ["x", 1, []]],
  [["spec", "nats_subject"], [1, null, undefined]],
  [["spec", "description"], [null, 5]],
  [["spec", "providers"], ["x", [1], [{ id: 1 }]]],
  [["spec", "depends"], [{}, [null]]],
  [["spec"], ["x", null, [], undefined]],
  [["kind"], ["agent.v2", "gone", 1, undefined]],
  [["registered_at"], ["now", null, undefined]],
];

const INSTANCE_MUTATIONS: Array<[Array<string | number>, unknown[]]> = [
  [["kind"], ["instance.v2", "agent", undefined]],
  [["status"], ["sleeping", 1, null]],
  [["last_heartbeat"], ["x", null, undefined]],
  [["heartbeat_interval_ms"], ["x", {}]],
  [["metadata"], ["x", [], { k: 1 }, null]],
  [["version"], ["x.y", 1]],
  [["active_tasks"], ["1", null]],
  [["spec_changed"], ["yes", undefined]],
];
const GONE_MUTATIONS: Array<[Array<string | number>, unknown[]]> = [
  [["reason"], ["vanished", 1]],
  [["at"], ["x", null, undefined]],
];

function mutate(record: Record<string, any>, path: Array<string | number>, value: unknown): Record<string, any> {
  const copy = structuredClone(record);
  let target: any = copy;
  for (const p of path.slice(0, -1)) target = target[p];
  const last = path[path.length - 1]!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

const mutation = (base: () => Record<string, any>, table: Array<[Array<string | number>, unknown[]]>) =>
  fc.constantFrom(...table).chain(([path, values]) => fc.constantFrom(...values).map((v) => ({ json: mutate(base(), path, v), label: `${path.join(".")} = ${JSON.stringify(v)}` })));

/** Types the bad records use: never a seed's (their keys stay readable), sometimes a victim's. */
const badType = fc.oneof(
  fc.stringMatching(/^[a-z0-9]{1,10}$/).map((t) => `bad-${t}`),
  fc.constantFrom("victim-a", "victim-b"),
);
const instanceId = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
/** Valid KV keys whose tokens break the registry's rules (upper case, extra tokens, '='). */
const foreignKey = fc.constantFrom("agents.UPPER", "agents.a=b", "instances.x", "instances.x.y.z", "agents._x", "other.thing", "agents.-lead");

/** The record of the issue, with the times a registry writes: the old view let it in, and its schema sharing then threw from a timer. */
export const ISSUE_14_RECORD = '{"kind":"agent","spec":{"capabilities":"abc"},"registered_at":1,"updated_at":1}';

const valueFor = (kind: "agent" | "instance", type: string) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => ({ value: b, label: `${b.length} random bytes` })) },
    { weight: 1, arbitrary: fc.json({ maxDepth: 3 }).map((j) => ({ value: enc.encode(j), label: `random JSON ${j.slice(0, 40)}` })) },
    { weight: 1, arbitrary: fc.constant({ value: enc.encode(ISSUE_14_RECORD), label: "the record of issue 14" }) },
    { weight: 1, arbitrary: fc.constant({ value: enc.encode(JSON.stringify({ format: 2, kind: `${kind}.v2`, data: {} })), label: "a newer format" }) },
    {
      weight: 6,
      arbitrary: (kind === "agent" ? mutation(() => agentRecord(type), AGENT_MUTATIONS) : fc.oneof(mutation(liveRecord, INSTANCE_MUTATIONS), mutation(goneRecord, GONE_MUTATIONS))).map(
        (m) => ({ value: enc.encode(JSON.stringify(m.json)), label: m.label }),
      ),
    },
  );

export const badRecord: fc.Arbitrary<BadRecord> = fc.oneof(
  { weight: 4, arbitrary: badType.chain((t) => valueFor("agent", t).map((v) => ({ key: `agents.${t}`, ...v }))) },
  {
    weight: 4,
    arbitrary: fc.tuple(fc.oneof(badType, fc.constant("seed-a")), instanceId).chain(([t, id]) =>
      valueFor("instance", t).map((v) => ({ key: `instances.${t}.${id === "a1" ? "a2" : id}`, ...v })),
    ),
  },
  { weight: 1, arbitrary: fc.tuple(foreignKey, valueFor("agent", "x")).map(([key, v]) => ({ key, ...v, label: `${v.label} under ${key}` })) },
);
