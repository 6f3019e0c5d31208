/**
 * The queries about the fleet's dependencies (PROTOCOL.md section 11.2): `graph` answers the
 * dependency graph, `sbom` writes it as a CycloneDX or SPDX document. A document cannot be
 * paged, so one that outgrows a reply is refused rather than sent cut short.
 */
import { randomUUID } from "node:crypto";
import { limitExceeded, type RegistryError } from "../../domain/errors.js";
import { graphQuery, sbomQuery } from "../../domain/messages.js";
import { dependencyGraph, withFileWarnings } from "../../domain/graph/graph-query.js";
import { fleetDocumentFloor } from "../../domain/sbom/fleet-document-floor.js";
import { packageVersion } from "../../version.js";
import { visibleAgent } from "./agent-queries.js";
import { defineQuery, type QueryContext } from "./query-entry.js";

/** graph and sbom: their bodies and answers. */
export const documentQueries = {
  // Section 11.2: the graph (the whole of it, not cut: a document cannot be paged) written
  // as an SBOM; refused when it outgrows a reply rather than sent cut short.
  sbom: defineQuery({
    body: sbomQuery,
    // A document op answers the document itself, with no field of the registry's beside it.
    document: true,
    answer(q, tenant, at) {
      const root = q.agent_type === undefined ? undefined : visibleAgent(at.view, q.agent_type, tenant);
      if (root === undefined) {
        // Admission before the work: a fleet whose document cannot fit is refused for the price of a sum (fleet-document-floor.ts).
        const floor = fleetDocumentFloor(at.view, tenant, at.listBytes());
        if (floor > at.listBytes()) throw sbomTooLarge(at, "its agents' names, versions, descriptions, teams and subjects alone are", false);
      }
      const ctx = { serial: randomUUID(), now: Date.now(), toolVersion: packageVersion() };
      const doc = at.buildSbom(at.view, q.format ?? "cyclonedx", root, tenant, ctx, at.listBytes());
      if (doc === null) throw sbomTooLarge(at, "its dependency graph alone is", root !== undefined);
      const bytes = Buffer.byteLength(JSON.stringify(doc));
      if (bytes > at.listBytes()) throw sbomTooLarge(at, `it is ${bytes} bytes,`, root !== undefined);
      return doc;
    },
  }),

  // Section 11.2: any agent, whatever its state; each node says its state now.
  graph: defineQuery({
    body: graphQuery,
    answer(q, tenant, at) {
      const root = q.agent_type === undefined ? undefined : visibleAgent(at.view, q.agent_type, tenant);
      const graph = dependencyGraph(at.view, q, root, tenant, at.listBytes());
      return withFileWarnings(graph, at.fileWarnings(), root !== undefined, at.listBytes());
    },
  }),
};

function sbomTooLarge(at: QueryContext, why: string, oneAgent: boolean): RegistryError {
  // One agent's closure is listed whole, however deep: only a larger max_payload lets it through.
  const advice = oneAgent ? "raise the server's max_payload" : "ask for one agent_type's";
  return limitExceeded(`the SBOM cannot be sent: ${why} more than a reply can carry; ${advice}`, "the connection's max_payload less 8 KiB", at.listBytes());
}
