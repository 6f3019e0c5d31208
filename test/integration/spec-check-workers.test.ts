/**
 * Spec validation off the event loop, through the composition root (issue 14, findings 9 and
 * 14). The registry runs in this process, so a schema compiled on its event loop would be
 * compiled on this thread: ajv's compile must never be called here, while heavy specs are
 * registered and lookups answered. Patterns go through the linear-time engine on the wire too.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Ajv } from "ajv";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { RawClient, configOf, spec, startRegistry, type TestRegistry } from "../harness/registry.js";
import { MAX_SCHEMA_NODES } from "../../src/domain/spec/schema-check.js";

let server: NatsTestServer;
let registry: TestRegistry;
let agent: RawClient;
let coordinator: RawClient;

beforeAll(async () => {
  server = await withNatsServer();
  registry = await startRegistry(server.url, { typeSpecCheckMs: 0 });
  agent = await RawClient.connect(server.url, configOf(registry).prefix);
  coordinator = await RawClient.connect(server.url, configOf(registry).prefix);
});

afterAll(async () => {
  await agent?.close();
  await coordinator?.close();
  await registry?.stop();
  await server?.[Symbol.asyncDispose]();
});

/** Capabilities whose schemas are all distinct and at the node limit: the costliest valid spec. */
const heavyCapabilities = (seed: string, n: number) =>
  Array.from({ length: n }, (_, c) => {
    const schema = (k: number) => ({ type: "object", properties: Object.fromEntries(Array.from({ length: MAX_SCHEMA_NODES - 2 }, (_, i) => [`p${seed}_${c}_${k}_${i}`, { type: "string", minLength: 1 }])) });
    return { name: `heavy.c${c}`, description: "", input_schema: schema(0), output_schema: schema(1) };
  });

describe("spec validation in worker threads", () => {
  it("registers heavy specs without compiling a schema on the event loop, while lookups are answered", async () => {
    const seeded = await agent.request("register.target", { spec: spec("target"), instance_id: "t1" });
    expect(seeded.ok).toBe(true);
    const compile = vi.spyOn(Ajv.prototype, "compile");
    try {
      let registering = true;
      const registrations = Promise.all(
        ["a", "b", "c"].map((seed) => agent.request("register.heavy", { spec: spec("heavy", { version: `1.0.${seed.charCodeAt(0)}`, capabilities: heavyCapabilities(seed, 8) }), instance_id: `h-${seed}` }, 60_000)),
      ).finally(() => (registering = false));
      let lookups = 0;
      while (registering) {
        const r = await coordinator.request("lookup", { capability: "target.run", min_revision: seeded.body.revision }, 10_000);
        expect(r.ok && r.body.providers.length).toBe(1);
        lookups++;
      }
      for (const r of await registrations) expect(r.ok, JSON.stringify(r.body)).toBe(true);
      expect(lookups).toBeGreaterThan(0);
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });

  it("accepts chained repeats and refuses lookaround with the pattern's path", async () => {
    const chained = { type: "object", properties: { q: { type: "string", pattern: "^[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*[a-z]*!$" } }, patternProperties: { "^a*a*a*a*a*a*b$": { type: "integer" } } };
    const ok = await agent.request("register.chained", { spec: spec("chained", { capabilities: [{ name: "chained.run", description: "", input_schema: chained, output_schema: {} }] }) });
    expect(ok.ok, JSON.stringify(ok.body)).toBe(true);

    const lookahead = { type: "object", properties: { password: { type: "string", pattern: "^(?=.*\\d).{8,}$" } } };
    const refused = await agent.request("register.lookahead", { spec: spec("lookahead", { capabilities: [{ name: "lookahead.run", description: "", input_schema: {}, output_schema: lookahead }] }) });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_spec");
    expect(refused.body.error.issues).toEqual([
      { path: "capabilities.0.output_schema.properties.password.pattern", message: expect.stringMatching(/^schema does not compile: pattern ".*" cannot be matched in linear time/) },
    ]);
  });
});
