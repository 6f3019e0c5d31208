/**
 * The fleet's SBOM as an SPDX 2.3 JSON document: a package per agent, server, tool and model
 * (SPDX has no services or models: `primaryPackagePurpose` and the comment say what each is),
 * `DEPENDS_ON` relationships from the dependency graph, `CONTAINS` from a server to its tools,
 * and `DESCRIBES` from the document to the agent asked about (or to every agent of the fleet).
 */
import type { BomContext } from "./cyclonedx.js";
import type { FleetBom } from "./fleet-bom.js";

type Json = Record<string, unknown>;

/** SPDX ids allow letters, digits, `.` and `-` only; a counter keeps two refs that read alike apart. */
function spdxIds(refs: Iterable<string>): Map<string, string> {
  const ids = new Map<string, string>();
  let n = 0;
  for (const ref of refs) ids.set(ref, `SPDXRef-${++n}-${ref.replace(/[^A-Za-z0-9.-]+/g, "-").slice(0, 200)}`);
  return ids;
}

/** SPDX times are UTC to the second: `2026-11-23T16:00:00Z`. */
const spdxTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export function spdx(bom: FleetBom, ctx: BomContext): Json {
  const ids = spdxIds(bom.dependsOn.keys());
  const id = (ref: string) => ids.get(ref)!;
  const packages: Json[] = [];
  for (const e of bom.entries) {
    const what = e.kind === "agent" ? "an agent" : e.kind === "mcp_server" ? "an MCP server" : "a tool";
    packages.push({
      SPDXID: id(e.ref),
      name: e.name,
      versionInfo: e.version,
      downloadLocation: "NOASSERTION",
      filesAnalyzed: false,
      primaryPackagePurpose: e.kind === "tool" ? "OTHER" : "APPLICATION",
      ...(e.spec ? { supplier: `Organization: ${e.spec.owner_team}`, description: e.spec.description || e.name } : {}),
      comment: `${what} of the agent registry (${e.ref}), ${e.state}${e.spec ? `, on NATS subject ${e.spec.nats_subject}` : ""}`,
    });
    for (const t of e.tools) {
      packages.push({ SPDXID: id(t.ref), name: t.name, versionInfo: e.version, downloadLocation: "NOASSERTION", filesAnalyzed: false, primaryPackagePurpose: "OTHER", description: t.description || t.name, comment: `a tool of ${e.ref}` });
    }
  }
  for (const m of bom.models) {
    packages.push({ SPDXID: id(m.ref), name: m.name, downloadLocation: "NOASSERTION", filesAnalyzed: false, primaryPackagePurpose: "OTHER", supplier: `Organization: ${m.provider}`, comment: `a machine-learning model (${m.kind}) of provider ${m.provider}` });
  }
  const relationships: Json[] = [];
  const described = bom.root ? [bom.root] : bom.entries.filter((e) => e.kind === "agent" || e.spec !== null);
  for (const e of described) relationships.push({ spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES", relatedSpdxElement: id(e.ref) });
  for (const e of bom.entries) for (const t of e.tools) relationships.push({ spdxElementId: id(e.ref), relationshipType: "CONTAINS", relatedSpdxElement: id(t.ref) });
  for (const [ref, deps] of bom.dependsOn) for (const d of deps) relationships.push({ spdxElementId: id(ref), relationshipType: "DEPENDS_ON", relatedSpdxElement: id(d) });
  return {
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name: bom.root ? `agent-registry ${bom.root.ref}` : "agent-registry fleet",
    documentNamespace: `urn:uuid:${ctx.serial}`,
    creationInfo: { created: spdxTime(ctx.now), creators: [`Tool: agent-registry-${ctx.toolVersion}`] },
    packages,
    relationships,
  };
}
