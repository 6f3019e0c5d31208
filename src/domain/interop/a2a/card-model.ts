/**
 * What a stored card says, read from either A2A version into one neutral model, so export
 * (export-card.ts) writes each target version from one form instead of four conversions. A
 * card is read by the fields of its detected version only: the v0.3 fields of a hybrid card
 * read as v1.0 are left out, as the SDK leaves them out. Values of the wrong JSON type are
 * left out too; the renderer checks every piece against the target schema anyway.
 *
 * v0.3 -> model: `url` + `preferredTransport` (default JSONRPC, the v0.3.0 schema's default)
 * and each of `additionalInterfaces`, with the card's `protocolVersion` (default "0.3.0", the
 * schema's default) on each; `supportsAuthenticatedExtendedCard` -> `extendedAgentCard`.
 * v1.0 -> model: `supportedInterfaces` (an interface without protocolVersion is taken as 1.0).
 */
import { isPlainObject } from "../../spec/spec.js";
import type { A2aVersion } from "./detect-version.js";
import { readRequirementsV0_3, readRequirementsV1_0, readSchemeV0_3, readSchemeV1_0, type Requirement, type Scheme } from "./security-schemes.js";

export type CardInterface = { url: string; binding: string; protocolVersion: string; tenant?: string };

export type CardSkill = {
  name?: string;
  description?: string;
  tags?: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
  security: Requirement[];
};

export type CardModel = {
  name?: string;
  description?: string;
  version?: string;
  interfaces: CardInterface[];
  provider?: unknown;
  documentationUrl?: string;
  iconUrl?: string;
  streaming?: boolean;
  pushNotifications?: boolean;
  stateTransitionHistory?: boolean;
  extendedAgentCard?: boolean;
  extensions: unknown[];
  securitySchemes: Array<[string, Scheme]>;
  security: Requirement[];
  defaultInputModes?: string[];
  defaultOutputModes?: string[];
  /** By skill id: the capabilities of the spec say which skills there are. */
  skills: Map<string, CardSkill>;
};

export const DEFAULT_TRANSPORT = "JSONRPC";
export const DEFAULT_V0_3_PROTOCOL_VERSION = "0.3.0";

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : undefined);
const obj = (v: unknown): Record<string, unknown> => (isPlainObject(v) ? v : {});

export function readCardModel(card: Record<string, unknown>, version: A2aVersion): CardModel {
  const capabilities = obj(card["capabilities"]);
  const v0 = version === "0.3";
  const model: CardModel = {
    interfaces: dedupe(v0 ? interfacesV0_3(card) : interfacesV1_0(card["supportedInterfaces"])),
    extensions: Array.isArray(capabilities["extensions"]) ? capabilities["extensions"] : [],
    securitySchemes: Object.entries(obj(card["securitySchemes"])).flatMap(([name, value]) => {
      const scheme = v0 ? readSchemeV0_3(value) : readSchemeV1_0(value);
      return scheme ? [[name, scheme] as [string, Scheme]] : [];
    }),
    security: v0 ? readRequirementsV0_3(card["security"]) : readRequirementsV1_0(card["securityRequirements"]),
    skills: new Map(),
  };
  const optional: Partial<CardModel> = {
    name: str(card["name"]),
    description: str(card["description"]),
    version: str(card["version"]),
    provider: card["provider"],
    documentationUrl: str(card["documentationUrl"]),
    iconUrl: str(card["iconUrl"]),
    streaming: bool(capabilities["streaming"]),
    pushNotifications: bool(capabilities["pushNotifications"]),
    stateTransitionHistory: v0 ? bool(capabilities["stateTransitionHistory"]) : undefined,
    extendedAgentCard: v0 ? bool(card["supportsAuthenticatedExtendedCard"]) : bool(capabilities["extendedAgentCard"]),
    defaultInputModes: strings(card["defaultInputModes"]),
    defaultOutputModes: strings(card["defaultOutputModes"]),
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) (model as Record<string, unknown>)[key] = value;
  for (const skill of Array.isArray(card["skills"]) ? card["skills"] : []) {
    if (!isPlainObject(skill) || typeof skill["id"] !== "string" || model.skills.has(skill["id"])) continue;
    const read: CardSkill = { security: v0 ? readRequirementsV0_3(skill["security"]) : readRequirementsV1_0(skill["securityRequirements"]) };
    const parts: Partial<CardSkill> = {
      name: str(skill["name"]),
      description: str(skill["description"]),
      tags: strings(skill["tags"]),
      examples: strings(skill["examples"]),
      inputModes: strings(skill["inputModes"]),
      outputModes: strings(skill["outputModes"]),
    };
    for (const [key, value] of Object.entries(parts)) if (value !== undefined) (read as Record<string, unknown>)[key] = value;
    model.skills.set(skill["id"], read);
  }
  return model;
}

function interfacesV0_3(card: Record<string, unknown>): CardInterface[] {
  const declared = str(card["protocolVersion"]);
  const protocolVersion = declared && declared.trim() !== "" ? declared : DEFAULT_V0_3_PROTOCOL_VERSION;
  const out: CardInterface[] = [];
  const url = str(card["url"]);
  if (url) out.push({ url, binding: str(card["preferredTransport"]) || DEFAULT_TRANSPORT, protocolVersion });
  for (const item of Array.isArray(card["additionalInterfaces"]) ? card["additionalInterfaces"] : []) {
    const extra = obj(item);
    const [u, transport] = [str(extra["url"]), str(extra["transport"])];
    if (u && transport) out.push({ url: u, binding: transport, protocolVersion });
  }
  return out;
}

function interfacesV1_0(list: unknown): CardInterface[] {
  const out: CardInterface[] = [];
  for (const item of Array.isArray(list) ? list : []) {
    const entry = obj(item);
    const [url, binding, version, tenant] = [str(entry["url"]), str(entry["protocolBinding"]), str(entry["protocolVersion"]), str(entry["tenant"])];
    if (!url || !binding) continue;
    out.push({ url, binding, protocolVersion: version && version.trim() !== "" ? version : "1.0", ...(tenant === undefined ? {} : { tenant }) });
  }
  return out;
}

/** The same URL and binding listed twice (v0.3 cards are told to repeat `url` in additionalInterfaces) is one interface. */
function dedupe(interfaces: CardInterface[]): CardInterface[] {
  const seen = new Set<string>();
  return interfaces.filter((i) => {
    const key = `${i.binding}\u0000${i.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
