/**
 * The fleet `sbom`'s admission (issue 35, item 9): a fleet whose document cannot fit a reply
 * is refused before any graph or document is built, and the floor it is refused on is never
 * above the bytes of a document actually written, in either format.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { RegistryView } from "../../../../src/domain/view/view.js";
import { agentKey, encodeRecord } from "../../../../src/domain/model/records.js";
import { QueryService } from "../../../../src/service/queries/queries.js";
import { RegistryError } from "../../../../src/domain/errors.js";
import { sbomDocument } from "../../../../src/domain/sbom/sbom-document.js";
import { fleetDocumentFloor } from "../../../../src/domain/sbom/fleet-document-floor.js";
import type { AgentSpec } from "../../../../src/domain/spec/spec.js";
import { cap, makeSpec } from "../../fixtures.js";

/** max_payload 16 KiB: a reply's list may take 12 KiB. */
const MAX_PAYLOAD = 16 * 1024;
let view: RegistryView;
let revision: number;
let builds: number;
let queries: QueryService;

function register(spec: AgentSpec): void {
  view.apply({ key: agentKey(spec.agent_type), revision: ++revision, operation: "PUT", created: 0, value: encodeRecord({ kind: "agent", spec, registered_at: 0, updated_at: 0 }) });
}

beforeEach(() => {
  view = new RegistryView();
  revision = 0;
  builds = 0;
  const countingBuilder: typeof sbomDocument = (...args) => {
    builds++;
    return sbomDocument(...args);
  };
  queries = new QueryService(view, async () => "reached" as const, { maxPayload: () => MAX_PAYLOAD, buildSbom: countingBuilder });
});

describe("fleet sbom admission", () => {
  it("refuses a fleet whose document cannot fit without building it, and builds one that fits once", async () => {
    for (let i = 0; i < 5; i++) register(makeSpec({ agent_type: `small-${i}` }));
    await expect(queries.run("sbom", {}, null)).resolves.toMatchObject({ bomFormat: "CycloneDX" });
    expect(builds).toBe(1);

    for (let i = 0; i < 60; i++) register(makeSpec({ agent_type: `big-${i}`, description: "d".repeat(300) }));
    builds = 0;
    const refusal = await queries.run("sbom", {}, null).then(() => null, (e: unknown) => e);
    expect(refusal).toBeInstanceOf(RegistryError);
    expect(refusal).toMatchObject({ code: "limit_exceeded", message: expect.stringContaining("ask for one agent_type's") });
    await expect(queries.run("sbom", { format: "spdx" }, null)).rejects.toMatchObject({ code: "limit_exceeded" });
    expect(builds, "the refused requests built nothing").toBe(0);
    // One agent's document is not the fleet's: still admitted and built.
    await expect(queries.run("sbom", { agent_type: "big-0" }, null)).resolves.toMatchObject({ bomFormat: "CycloneDX" });
    expect(builds).toBe(1);
  });

  it("counts only what the asker may see: another tenant's agents do not make the shared fleet's document refused", async () => {
    register(makeSpec({ agent_type: "shared-one" }));
    for (let i = 0; i < 60; i++) register(makeSpec({ agent_type: `t-${i}`, tenant_scope: "acme", description: "d".repeat(300) }));
    await expect(queries.run("sbom", {}, null)).resolves.toMatchObject({ bomFormat: "CycloneDX" });
    await expect(queries.run("sbom", {}, "acme")).rejects.toMatchObject({ code: "limit_exceeded" });
    expect(builds).toBe(1);
  });

  it("the floor is at most the bytes of the document written, in both formats", () => {
    register(makeSpec({ agent_type: "plain" }));
    register(makeSpec({ agent_type: "no-description", description: "" }));
    register(makeSpec({ agent_type: "unicode", description: "résumé ✓ 𝔘", owner_team: "équipe" }));
    register(makeSpec({ agent_type: "quoted", description: 'say "hi"\\n' }));
    register(makeSpec({ agent_type: "tools", kind: "mcp_server", capabilities: [cap("t.one"), cap("t.two")], depends: [{ type: "agent", name: "plain", version: "1.0.0" }] }));
    register(makeSpec({ agent_type: "scoped", tenant_scope: "acme" }));
    const ctx = { serial: "00000000-0000-4000-8000-000000000000", now: 0, toolVersion: "0.0.0" };
    for (const tenant of [null, "acme"]) {
      const floor = fleetDocumentFloor(view, tenant, Number.MAX_SAFE_INTEGER);
      expect(floor).toBeGreaterThan(0);
      for (const format of ["cyclonedx", "spdx"] as const) {
        const doc = sbomDocument(view, format, undefined, tenant, ctx, 1024 * 1024);
        expect(Buffer.byteLength(JSON.stringify(doc)), `${format} as ${tenant}`).toBeGreaterThanOrEqual(floor);
      }
    }
  });
});
