/**
 * The A2A Agent Card of a registered spec, for A2A v1.0 or v0.3 (PROTOCOL.md section 10.3).
 * Every card returned validates strictly against that version's schema (checked before it is
 * returned); liveness (status, instances, heartbeats) is never in it.
 *
 * Verbatim: a stored card (`a2a_card`) already of the requested version, valid against its
 * schema, with no field the version does not define (Registry v2's skill `inputSchema` and
 * `outputSchema` aside), with at least one interface for v1.0, whose skills are exactly the
 * spec's capabilities (same ids, same order, same schemas) and which declares the spec's
 * dependencies if it has any, is returned as it is, signatures included.
 *
 * Otherwise the card is rendered, from what the stored card says (card-model.ts) with the spec
 * filling what it lacks, and without `signatures` (they sign the original content):
 *   name                  = card name, else spec display_name, else agent_type (blank = missing)
 *   description           = the card's, else the spec's, else the name (import needs one)
 *   version               = the card's when it reads as the spec's version (`1.0` for 1.0.0),
 *                           else the spec's
 *   interfaces            = the card's (v0.3: those whose protocolVersion is below 1; the first is
 *                           `url`/`preferredTransport`/`protocolVersion`, and with two or more
 *                           all are listed in `additionalInterfaces`, as v0.3 recommends); with
 *                           none left: `nats:<nats_subject>` with binding "NATS". A spec without
 *                           a card: its `url` as JSONRPC (the v0.3 default transport), then the
 *                           NATS interface. protocolVersion "1.0" or "0.3.0" when the card gave
 *                           none.
 *   provider, documentationUrl, iconUrl, capability flags, extensions, securitySchemes,
 *   security(Requirements), default modes: the card's, converted (security-schemes.ts) and kept
 *                           where the target schema accepts them; modes default to
 *                           ["application/json"] (registry tasks are JSON); an sbom extension
 *                           is added for the spec's `depends` when the card has none
 *   skills                = one per capability, in order: id = capability name; name,
 *                           description, tags, examples, modes and security from the card's
 *                           skill of that id, else name = title or capability name,
 *                           description, tags ([] when none) and examples of the capability;
 *                           `inputSchema`/`outputSchema` = the capability's schemas unless {}
 * Fields neither version has, and those the target lacks (v0.3 `stateTransitionHistory` in
 * v1.0, an OAuth device code flow in v0.3), are left out.
 */
import { isPlainObject, type AgentSpec } from "../../spec/spec.js";
import { ErrorCode, RegistryError } from "../../errors.js";
import { detectA2aVersion, protocolMajor, type A2aVersion } from "./detect-version.js";
import { checkCardLimits } from "./card-limits.js";
import { completeVersion } from "../../spec/version-completion.js";
import { checkCardSchema, conformsTo } from "./card-check.js";
import { fieldAdvice } from "./card-advice.js";
import { DEFAULT_TRANSPORT, DEFAULT_V0_3_PROTOCOL_VERSION, readCardModel, type CardInterface, type CardModel } from "./card-model.js";
import { writeRequirementsV0_3, writeRequirementsV1_0, writeSchemeV0_3, writeSchemeV1_0 } from "./security-schemes.js";
import { SBOM_EXTENSION_URI, sbomExtension } from "./sbom-extension.js";

export type A2aCard = Record<string, unknown>;

/** The binding of the interface that names the agent's NATS subject. */
export const NATS_BINDING = "NATS";
export const natsInterfaceUrl = (subject: string): string => `nats:${subject}`;
export const DEFAULT_MODES: readonly string[] = ["application/json"];
const PROTOCOL_VERSION: Readonly<Record<A2aVersion, string>> = { "1.0": "1.0", "0.3": DEFAULT_V0_3_PROTOCOL_VERSION };

export function exportCard(spec: AgentSpec, version: A2aVersion): A2aCard {
  const stored = isPlainObject(spec.a2a_card) && checkCardLimits(spec.a2a_card) === null ? spec.a2a_card : undefined;
  if (stored && exportsVerbatim(stored, spec, version)) return structuredClone(stored);
  const card = renderCard(stored ? readCardModel(stored, detectA2aVersion(stored)) : undefined, spec, version);
  const deviations = checkCardSchema(card, version);
  if (deviations.length > 0) {
    // A bug, not bad input: the renderer keeps only pieces the target schema accepts.
    const first = deviations[0]!;
    throw new RegistryError(ErrorCode.Internal, `exported card for ${spec.agent_type} breaks A2A ${version} at ${first.path}: ${first.message}`);
  }
  // The rendered card shares schemas, params and provider with the spec; the caller gets its own.
  return structuredClone(card);
}

function exportsVerbatim(card: Record<string, unknown>, spec: AgentSpec, version: A2aVersion): boolean {
  if (detectA2aVersion(card) !== version || checkCardSchema(card, version).length > 0 || fieldAdvice(card, version).length > 0) return false;
  if (version === "1.0" && (card["supportedInterfaces"] as unknown[]).length === 0) return false;
  const skills = card["skills"] as Array<Record<string, unknown>>;
  if (skills.length !== spec.capabilities.length) return false;
  const sameSkills = spec.capabilities.every((cap, i) => {
    const skill = skills[i]!;
    return skill["id"] === cap.name && sameSchema(skill["inputSchema"], cap.input_schema) && sameSchema(skill["outputSchema"], cap.output_schema);
  });
  return sameSkills && (!spec.depends?.length || hasSbom(card["capabilities"]));
}

const isEmptySchema = (s: unknown): boolean => s === undefined || s === true || (isPlainObject(s) && Object.keys(s).length === 0);
const sameSchema = (a: unknown, b: unknown): boolean => (isEmptySchema(a) ? isEmptySchema(b) : JSON.stringify(a) === JSON.stringify(b));
const hasSbom = (capabilities: unknown): boolean =>
  isPlainObject(capabilities) && Array.isArray(capabilities["extensions"]) && capabilities["extensions"].some((e) => isPlainObject(e) && e["uri"] === SBOM_EXTENSION_URI);
/** The string unless it is missing or blank. */
const filled = (s: string | undefined): string | undefined => (s === undefined || s.trim() === "" ? undefined : s);

function renderCard(model: CardModel | undefined, spec: AgentSpec, version: A2aVersion): A2aCard {
  const v1 = version === "1.0";
  const name = filled(model?.name) ?? filled(spec.display_name) ?? spec.agent_type;
  const cardVersion = filled(model?.version);
  const out: A2aCard = {
    name,
    // Import needs a description (and the spec's may be ""): the name stands in for a blank one.
    description: filled(model?.description) ?? filled(spec.description) ?? name,
    // The card's own wording ("1.0") when it is the spec's version, so a card read back registers the same version.
    version: cardVersion !== undefined && completeVersion(cardVersion)?.version === spec.version ? cardVersion : spec.version,
  };
  const interfaces = interfacesFor(model, spec, version);
  if (v1) {
    out["supportedInterfaces"] = interfaces.map((i) => ({ url: i.url, protocolBinding: i.binding, protocolVersion: i.protocolVersion, ...(i.tenant === undefined ? {} : { tenant: i.tenant }) }));
  } else {
    const [primary] = interfaces as [CardInterface];
    Object.assign(out, { url: primary.url, preferredTransport: primary.binding, protocolVersion: primary.protocolVersion });
    if (interfaces.length > 1) out["additionalInterfaces"] = interfaces.map((i) => ({ url: i.url, transport: i.binding }));
  }
  if (model?.provider !== undefined && conformsTo(version, "AgentProvider", model.provider)) {
    const { organization, url } = model.provider as { organization: string; url: string };
    out["provider"] = { organization, url };
  }
  if (model?.documentationUrl !== undefined) out["documentationUrl"] = model.documentationUrl;
  if (model?.iconUrl !== undefined) out["iconUrl"] = model.iconUrl;
  out["capabilities"] = capabilitiesFor(model, spec, version);
  if (!v1 && model?.extendedAgentCard !== undefined) out["supportsAuthenticatedExtendedCard"] = model.extendedAgentCard;

  const schemes = (model?.securitySchemes ?? []).flatMap(([name, scheme]) => {
    const written = v1 ? writeSchemeV1_0(scheme) : writeSchemeV0_3(scheme);
    return written && conformsTo(version, "SecurityScheme", written) ? [[name, written] as const] : [];
  });
  if (schemes.length > 0) out["securitySchemes"] = Object.fromEntries(schemes);
  if (model && model.security.length > 0) out[v1 ? "securityRequirements" : "security"] = v1 ? writeRequirementsV1_0(model.security) : writeRequirementsV0_3(model.security);
  out["defaultInputModes"] = [...(model?.defaultInputModes ?? DEFAULT_MODES)];
  out["defaultOutputModes"] = [...(model?.defaultOutputModes ?? DEFAULT_MODES)];
  out["skills"] = spec.capabilities.map((cap) => renderSkill(cap, model?.skills.get(cap.name), version));
  return out;
}

/** The interfaces the card lists for that version, never none (see the header). */
function interfacesFor(model: CardModel | undefined, spec: AgentSpec, version: A2aVersion): CardInterface[] {
  const nats: CardInterface = { url: natsInterfaceUrl(spec.nats_subject), binding: NATS_BINDING, protocolVersion: PROTOCOL_VERSION[version] };
  if (!model) return [...(spec.url ? [{ url: spec.url, binding: DEFAULT_TRANSPORT, protocolVersion: PROTOCOL_VERSION[version] }] : []), nats];
  // A v0.3 card lists only what v0.3 clients can talk to: nothing at protocol version 1 or later.
  const usable = version === "1.0" ? model.interfaces : model.interfaces.filter((i) => (protocolMajor(i.protocolVersion) ?? 0) < 1);
  return usable.length > 0 ? usable : [nats];
}

function capabilitiesFor(model: CardModel | undefined, spec: AgentSpec, version: A2aVersion): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (model?.streaming !== undefined) out["streaming"] = model.streaming;
  if (model?.pushNotifications !== undefined) out["pushNotifications"] = model.pushNotifications;
  if (version === "0.3" && model?.stateTransitionHistory !== undefined) out["stateTransitionHistory"] = model.stateTransitionHistory;
  if (version === "1.0" && model?.extendedAgentCard !== undefined) out["extendedAgentCard"] = model.extendedAgentCard;
  const extensions = (model?.extensions ?? []).flatMap((e) => {
    if (!isPlainObject(e)) return [];
    const kept = Object.fromEntries(["uri", "description", "required", "params"].filter((k) => e[k] !== undefined).map((k) => [k, e[k]]));
    return conformsTo(version, "AgentExtension", kept) ? [kept] : [];
  });
  if (spec.depends?.length && !extensions.some((e) => e["uri"] === SBOM_EXTENSION_URI)) extensions.push(sbomExtension(spec.depends));
  if (extensions.length > 0) out["extensions"] = extensions;
  return out;
}

function renderSkill(cap: AgentSpec["capabilities"][number], skill: ReturnType<CardModel["skills"]["get"]>, version: A2aVersion): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: cap.name,
    name: filled(skill?.name) ?? filled(cap.title) ?? cap.name,
    description: skill?.description ?? cap.description,
    tags: [...(skill?.tags ?? cap.tags)],
  };
  const examples = skill?.examples ?? (cap.examples.length > 0 ? cap.examples : undefined);
  if (examples) out["examples"] = [...examples];
  if (skill?.inputModes) out["inputModes"] = [...skill.inputModes];
  if (skill?.outputModes) out["outputModes"] = [...skill.outputModes];
  if (skill && skill.security.length > 0) out[version === "1.0" ? "securityRequirements" : "security"] = version === "1.0" ? writeRequirementsV1_0(skill.security) : writeRequirementsV0_3(skill.security);
  if (!isEmptySchema(cap.input_schema)) out["inputSchema"] = cap.input_schema;
  if (!isEmptySchema(cap.output_schema)) out["outputSchema"] = cap.output_schema;
  return out;
}
