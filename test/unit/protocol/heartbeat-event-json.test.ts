/** The heartbeat event's hand-written JSON is byte for byte what stringifying the CloudEvent gives. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventType, heartbeatEventJson, toCloudEvent, type HeartbeatData } from "../../../src/protocol/events.js";
import { isoTime } from "../../../src/protocol/iso-time.js";

const status = fc.constantFrom("ready" as const, "draining" as const, "registered" as const);
// Any text, lone surrogates, quotes and control characters included: the escaping must agree too.
const text = fc.string({ unit: "binary", maxLength: 40 });
const data = fc.record({ agent_type: text, instance_id: text, status, active_tasks: fc.option(fc.nat(), { nil: null }) });
const time = fc.integer({ min: 0, max: 8.64e15 });

describe("heartbeatEventJson", () => {
  it("equals JSON.stringify of the CloudEvent toCloudEvent builds", () => {
    fc.assert(
      fc.property(text, data, time, (id, d: HeartbeatData, t) => {
        expect(heartbeatEventJson(id, d, t)).toBe(JSON.stringify(toCloudEvent(EventType.AgentHeartbeat, id, d.agent_type, d, t)));
      }),
      { numRuns: 500 },
    );
  });
});

describe("isoTime", () => {
  it("is toISOString, also when asked for the same or an earlier time again", () => {
    fc.assert(
      fc.property(fc.array(time, { minLength: 1, maxLength: 20 }), (times) => {
        for (const t of [...times, ...times]) expect(isoTime(t)).toBe(new Date(t).toISOString());
      }),
    );
  });
});
