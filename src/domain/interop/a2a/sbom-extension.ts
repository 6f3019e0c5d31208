/**
 * Dependencies carried by a card, as agentgateway's Registry v2 puts them (PROTOCOL.md
 * sections 10.1 and 11.2): an A2A extension in `capabilities.extensions` with
 * `uri: "urn:agentgateway:sbom"` and `params.depends`, a list of
 * `{"type": "tool" | "agent", "name", "version", "skill"?}` where `skill` names the skill of an
 * agent dependency (agentgateway's examples/pattern-demos/configs/registry-v2-example.json
 * and its TypeScript builder's `sbom()`, in jakemannix/agentgatewaygastown).
 *
 * Read: each entry becomes an AgentSpec `depends` entry, `skill` (or `capability`) becoming
 * `capability`; an entry the AgentSpec's dependency rules refuse (no exact version, an unknown
 * type) is left out with a finding. Written (export of a spec that has `depends` and whose
 * card carries no such extension): one extension, `required: false` because a client that
 * does not know it can still talk to the agent.
 */
import { agentSpecSchema, isPlainObject, type AgentSpec, type AgentSpecInput } from "../../spec/spec.js";
import type { CardFinding } from "./card-check.js";

export const SBOM_EXTENSION_URI = "urn:agentgateway:sbom";

type DependencyInput = NonNullable<AgentSpecInput["depends"]>[number];
const dependencySchema = agentSpecSchema.shape.depends.unwrap().element;

export type CardDependencies = {
  depends: DependencyInput[];
  /** Entries left out, at paths inside the card. */
  dropped: CardFinding[];
};

/** The `depends` of every sbom extension of the card, in order. */
export function cardDependencies(card: Record<string, unknown>): CardDependencies {
  const depends: DependencyInput[] = [];
  const dropped: CardFinding[] = [];
  const capabilities = card["capabilities"];
  const extensions = isPlainObject(capabilities) ? capabilities["extensions"] : undefined;
  if (!Array.isArray(extensions)) return { depends, dropped };
  extensions.forEach((extension, i) => {
    if (!isPlainObject(extension) || extension["uri"] !== SBOM_EXTENSION_URI) return;
    const params = extension["params"];
    const list = isPlainObject(params) ? params["depends"] : undefined;
    const at = `capabilities.extensions.${i}.params.depends`;
    if (!Array.isArray(list)) {
      dropped.push({ path: at, message: `the ${SBOM_EXTENSION_URI} extension has no depends list; no dependency taken from it` });
      return;
    }
    list.forEach((entry, j) => {
      const parsed = dependencySchema.safeParse(toDependency(entry));
      if (parsed.success) depends.push(parsed.data);
      else {
        const why = parsed.error.issues.map((issue) => `${issue.path.join(".") || "entry"}: ${issue.message}`).join("; ");
        dropped.push({ path: `${at}.${j}`, message: `left out of the spec's depends: ${why}` });
      }
    });
  });
  return { depends, dropped };
}

function toDependency(entry: unknown): unknown {
  if (!isPlainObject(entry)) return entry;
  const capability = entry["capability"] ?? entry["skill"];
  return {
    type: entry["type"],
    name: entry["name"],
    version: entry["version"],
    ...(capability === undefined ? {} : { capability }),
  };
}

/** The extension that declares a spec's dependencies, in agentgateway's form. */
export function sbomExtension(depends: NonNullable<AgentSpec["depends"]>): Record<string, unknown> {
  return {
    uri: SBOM_EXTENSION_URI,
    description: "Software bill of materials: the tools and agents this agent depends on",
    required: false,
    params: {
      depends: depends.map((d) => ({ type: d.type, name: d.name, version: d.version, ...(d.capability === undefined ? {} : { skill: d.capability }) })),
    },
  };
}
