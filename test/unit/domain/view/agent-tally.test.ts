/**
 * The agent tally the fleet gauges read must say what a pass over the view says, whatever
 * order entries arrive in: agent records (with and without a tenant), instances, tombstones,
 * deletes, a quiet load and a clear.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AgentTally } from "../../../../src/domain/view/agent-tally.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, instanceKey } from "../../../../src/domain/model/records.js";
import { STATIC_INSTANCE_ID, type InstanceStatus } from "../../../../src/domain/model/model.js";
import { agentPut, del, gonePut, instPut } from "../../store-entries.js";
import { makeSpec } from "../../fixtures.js";
import { Registry } from "prom-client";
import { silentLogger } from "../../../../src/kit/logger.js";
import { createMetrics } from "../../../../src/adapters/http/metrics.js";
import { FleetGauges } from "../../../../src/adapters/http/fleet-gauges.js";

const TYPES = ["a", "b", "c", "d"];
const STATUSES: InstanceStatus[] = ["registered", "ready", "draining"];

/** The figures as the gauges computed them before the tally: a pass over every agent type. */
function byPass(view: RegistryView): { statuses: Record<string, number>; mostTypes: number; mostInstances: number } {
  const statuses: Record<string, number> = {};
  const tenants = new Map<string, number>();
  let mostInstances = 0;
  for (const a of view.all()) {
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    mostInstances = Math.max(mostInstances, a.instances.size);
    const tenant = a.spec.tenant_scope ?? "";
    tenants.set(tenant, (tenants.get(tenant) ?? 0) + 1);
  }
  return { statuses, mostTypes: Math.max(0, ...tenants.values()), mostInstances };
}

function tallied(tally: AgentTally): ReturnType<typeof byPass> {
  const statuses: Record<string, number> = {};
  for (const s of [...STATUSES, "deregistered"]) if (tally.count(s) > 0) statuses[s] = tally.count(s);
  return { statuses, mostTypes: tally.mostTypesInOneTenant(), mostInstances: tally.mostInstancesInOneType() };
}

const op = fc.oneof(
  fc.record({ kind: fc.constant("agent" as const), type: fc.constantFrom(...TYPES), tenant: fc.constantFrom(undefined, "t1", "t2") }),
  fc.record({ kind: fc.constant("agent-del" as const), type: fc.constantFrom(...TYPES) }),
  fc.record({ kind: fc.constant("instance" as const), type: fc.constantFrom(...TYPES), id: fc.constantFrom("i1", "i2", "i3", STATIC_INSTANCE_ID), status: fc.constantFrom(...STATUSES) }),
  fc.record({ kind: fc.constant("gone" as const), type: fc.constantFrom(...TYPES), id: fc.constantFrom("i1", "i2", "i3") }),
  fc.record({ kind: fc.constant("instance-del" as const), type: fc.constantFrom(...TYPES), id: fc.constantFrom("i1", "i2", "i3", STATIC_INSTANCE_ID) }),
  fc.record({ kind: fc.constant("quiet-begin" as const) }),
  fc.record({ kind: fc.constant("quiet-end" as const) }),
  fc.record({ kind: fc.constant("clear" as const) }),
);

describe("AgentTally", () => {
  it("equals a pass over the view after any sequence of entries, for a tally added before or after them", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), fc.nat(80), (ops, lateAt) => {
        const view = new RegistryView();
        const early = new AgentTally();
        view.addListener(early);
        let late: AgentTally | null = null;
        let rev = 0;
        ops.forEach((o, at) => {
          rev++;
          if (o.kind === "agent") view.apply(agentPut(rev, makeSpec({ agent_type: o.type, ...(o.tenant ? { tenant_scope: o.tenant } : {}) })));
          else if (o.kind === "agent-del") view.apply(del(agentKey(o.type), rev));
          else if (o.kind === "instance") view.apply(instPut(rev, o.type, o.id, { status: o.status }));
          else if (o.kind === "gone") view.apply(gonePut(rev, o.type, o.id, "evicted", rev));
          else if (o.kind === "instance-del") view.apply(del(instanceKey(o.type, o.id), rev));
          else if (o.kind === "quiet-begin") view.beginQuietLoad();
          else if (o.kind === "quiet-end") view.endQuietLoad();
          else {
            view.clear();
            rev = 0;
          }
          if (at === lateAt) view.addListener((late = new AgentTally()));
          // Nothing is served during a quiet load; the listeners catch up at its end.
          if (quietOpen(ops, at)) return;
          expect(tallied(early)).toEqual(byPass(view));
          if (late) expect(tallied(late)).toEqual(byPass(view));
        });
        view.endQuietLoad();
        expect(tallied(early)).toEqual(byPass(view));
        if (late) expect(tallied(late)).toEqual(byPass(view));
      }),
      { numRuns: 300 },
    );
  });

  it("counts one type with many instances as the fullest, and forgets a removed type", () => {
    const view = new RegistryView();
    const tally = new AgentTally();
    view.addListener(tally);
    view.apply(agentPut(1, makeSpec({ agent_type: "alpha", tenant_scope: "t1" })));
    view.apply(agentPut(2, makeSpec({ agent_type: "beta", tenant_scope: "t1" })));
    for (let k = 0; k < 3; k++) view.apply(instPut(3 + k, "alpha", `i${k}`));
    expect([tally.count("ready"), tally.count("deregistered")]).toEqual([1, 1]);
    expect([tally.mostInstancesInOneType(), tally.mostTypesInOneTenant()]).toEqual([3, 2]);
    view.apply(del(agentKey("alpha"), 6));
    expect([tally.count("ready"), tally.count("deregistered")]).toEqual([0, 1]);
    expect([tally.mostInstancesInOneType(), tally.mostTypesInOneTenant()]).toEqual([0, 1]);
  });
});

/** True when a quiet load begun at or before `at` has not ended by then. */
function quietOpen(ops: ReadonlyArray<{ kind: string }>, at: number): boolean {
  let open = false;
  for (let k = 0; k <= at; k++) {
    if (ops[k]!.kind === "quiet-begin") open = true;
    else if (ops[k]!.kind === "quiet-end") open = false;
  }
  return open;
}

describe("FleetGauges", () => {
  it("exports the tallies as the agents, instances and limit-usage gauges", async () => {
    const view = new RegistryView();
    view.apply(agentPut(1, makeSpec({ agent_type: "alpha", tenant_scope: "t1" })));
    view.apply(instPut(2, "alpha", "i1", { status: "ready" }));
    view.apply(instPut(3, "alpha", "i2", { status: "draining" }));
    const metrics = createMetrics(new Registry());
    // Added after the first entries: the tally starts from what the view holds.
    const gauges = new FleetGauges(view, metrics, { maxInstancesPerType: 4, maxTypesPerTenant: 10 }, silentLogger);
    view.apply(agentPut(4, makeSpec({ agent_type: "beta", tenant_scope: "t1" })));
    gauges.update();
    const value = async (name: string, labels: Record<string, string>): Promise<number | undefined> => {
      const metric = await metrics.registry.getSingleMetric(name)?.get();
      return metric?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
    };
    expect(await value("agent_registry_agents", { status: "ready" })).toBe(1);
    expect(await value("agent_registry_agents", { status: "deregistered" })).toBe(1);
    expect(await value("agent_registry_instances", { status: "draining" })).toBe(1);
    expect(await value("agent_registry_limit_usage_ratio", { limit: "instances_per_type" })).toBe(0.5);
    expect(await value("agent_registry_limit_usage_ratio", { limit: "types_per_tenant" })).toBe(0.2);
  });
});
