import { describe, expect, it } from "vitest";
import { JsonInterner } from "../../../../src/domain/view/json-interner.js";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { encodeRecord } from "../../../../src/domain/model/records.js";
import { FORGET_SCHEMAS_AFTER } from "../../../../src/domain/view/schema-sharing.js";
import { makeSpec } from "../../fixtures.js";

const schema = () => ({ type: "object", properties: { text: { type: "string" } }, required: ["text"] });

describe("JsonInterner", () => {
  it("gives one frozen copy for equal values and keeps different ones apart", () => {
    const interner = new JsonInterner();
    const a = interner.intern(schema());
    const b = interner.intern(schema());
    const c = interner.intern({ type: "string" });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a.properties as Record<string, object>)["text"])).toBe(true);
    expect(interner.size).toBe(2);
  });

  it("forgets the copies not in use when told which are", () => {
    const interner = new JsonInterner();
    const kept = interner.intern(schema());
    interner.intern({ type: "string" });
    interner.retainOnly(new Set([kept]));
    expect(interner.size).toBe(1);
    expect(interner.intern(schema())).toBe(kept);
  });

  it("passes booleans and null through", () => {
    const interner = new JsonInterner();
    expect(interner.intern(true)).toBe(true);
    expect(interner.intern(null)).toBe(null);
    expect(interner.size).toBe(0);
  });
});

describe("RegistryView shares equal capability schemas across specs", () => {
  it("holds one object for a schema that two agent types declare, once shareSchemas has run", () => {
    const view = new RegistryView();
    const spec = (agentType: string) =>
      makeSpec({
        agent_type: agentType,
        nats_subject: `agent.${agentType}`,
        capabilities: [{ name: `${agentType}.do`, description: "does", input_schema: schema(), output_schema: { type: "object" } }],
      });
    let revision = 0;
    for (const t of ["alpha", "beta"]) {
      view.apply({ key: `agents.${t}`, revision: ++revision, operation: "PUT", created: 0, value: encodeRecord({ kind: "agent", spec: spec(t), registered_at: 1, updated_at: 1 }) });
    }
    const specBefore = view.get("alpha")!.spec;
    expect(view.shareSchemas(1)).toBe(1);
    expect(view.shareSchemas(10)).toBe(0);
    const a = view.get("alpha")!.spec.capabilities[0]!;
    const b = view.get("beta")!.spec.capabilities[0]!;
    expect(a.input_schema).toBe(b.input_schema);
    // The spec object stays the same, so indexes keyed on it see no change.
    expect(view.get("alpha")!.spec).toBe(specBefore);
    expect(a.input_schema).toEqual(schema());
    expect(a.name).not.toBe(b.name);
  });

  it("drops the copies no spec uses any more, once enough new ones came", () => {
    const view = new RegistryView();
    let revision = 0;
    // Each version of "alpha" declares a schema of its own; "beta" keeps one schema throughout.
    const put = (agentType: string, marker: number) =>
      view.apply({
        key: `agents.${agentType}`,
        revision: ++revision,
        operation: "PUT",
        created: 0,
        value: encodeRecord({
          kind: "agent",
          spec: makeSpec({ agent_type: agentType, capabilities: [{ name: `${agentType}.do`, description: "does", input_schema: { const: marker }, output_schema: { type: "object" } }] }),
          registered_at: 1,
          updated_at: 1,
        }),
      });
    put("beta", -1);
    // Held: beta's input, the output both declare, and one input per alpha version so far.
    for (let v = 0; v < FORGET_SCHEMAS_AFTER - 2; v++) {
      put("alpha", v);
      view.shareSchemas(10);
    }
    expect(view.distinctSchemas).toBe(FORGET_SCHEMAS_AFTER);
    const betaSchema = view.get("beta")!.spec.capabilities[0]!.input_schema;
    put("alpha", FORGET_SCHEMAS_AFTER);
    view.shareSchemas(10);
    // Left: beta's input, the output both share, and the current alpha's input.
    expect(view.distinctSchemas).toBe(3);
    expect(view.get("beta")!.spec.capabilities[0]!.input_schema).toBe(betaSchema);
    expect(view.get("alpha")!.spec.capabilities[0]!.input_schema).toEqual({ const: FORGET_SCHEMAS_AFTER });
  });
});
