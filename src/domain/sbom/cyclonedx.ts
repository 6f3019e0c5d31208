/**
 * The fleet's SBOM as a CycloneDX 1.6 JSON BOM. Agents are components of type `application`
 * (the agent asked about is the BOM's `metadata.component`), MCP servers are services with
 * their tools as nested services, tools registered on their own are services, the models a
 * spec's providers name are `machine-learning-model` components; `dependencies` holds every
 * reference with what it depends on. What the registry knows beyond CycloneDX's fields
 * (state, kind, subject, tenant) goes in `properties` under `agent-registry:`.
 */
import type { BomEntry, BomModel, FleetBom } from "./fleet-bom.js";

export type BomContext = { serial: string; now: number; toolVersion: string };

type Json = Record<string, unknown>;

function properties(e: BomEntry): Json[] {
  const out: Json[] = [
    { name: "agent-registry:kind", value: e.kind },
    { name: "agent-registry:state", value: e.state },
  ];
  if (e.spec) {
    out.push({ name: "agent-registry:nats_subject", value: e.spec.nats_subject });
    if (e.spec.tenant_scope !== null) out.push({ name: "agent-registry:tenant", value: e.spec.tenant_scope });
  }
  return out;
}

function component(e: BomEntry): Json {
  return {
    type: "application",
    "bom-ref": e.ref,
    name: e.name,
    version: e.version,
    ...(e.spec ? { description: e.spec.description || e.name, supplier: { name: e.spec.owner_team } } : {}),
    properties: properties(e),
  };
}

function service(e: BomEntry): Json {
  const endpoints = e.spec ? [`nats:${e.spec.nats_subject}`, ...(e.spec.url ? [e.spec.url] : [])] : [];
  return {
    "bom-ref": e.ref,
    name: e.name,
    version: e.version,
    ...(e.spec ? { description: e.spec.description || e.name, provider: { name: e.spec.owner_team } } : {}),
    ...(endpoints.length > 0 ? { endpoints } : {}),
    properties: properties(e),
    ...(e.tools.length > 0 ? { services: e.tools.map((t) => ({ "bom-ref": t.ref, name: t.name, description: t.description || t.name })) } : {}),
  };
}

const model = (m: BomModel): Json => ({
  type: "machine-learning-model",
  "bom-ref": m.ref,
  name: m.name,
  publisher: m.provider,
  properties: [{ name: "agent-registry:model_kind", value: m.kind }],
});

export function cycloneDx(bom: FleetBom, ctx: BomContext): Json {
  const subject = bom.root && bom.root.kind === "agent" ? bom.root : null;
  const others = bom.entries.filter((e) => e !== subject);
  const components = [...others.filter((e) => e.kind === "agent").map(component), ...bom.models.map(model)];
  const services = others.filter((e) => e.kind !== "agent").map(service);
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    serialNumber: `urn:uuid:${ctx.serial}`,
    version: 1,
    metadata: {
      timestamp: new Date(ctx.now).toISOString(),
      tools: { components: [{ type: "application", name: "agent-registry", version: ctx.toolVersion }] },
      ...(subject ? { component: component(subject) } : {}),
    },
    components,
    services,
    dependencies: [...bom.dependsOn].map(([ref, dependsOn]) => ({ ref, dependsOn })),
  };
}
