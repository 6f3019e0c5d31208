/**
 * A2A Agent Cards in and out of the registry (PROTOCOL.md sections 10.1 and 10.3): pure, no
 * I/O. The service, the SDK and the CLI use these; nothing else of this folder is public.
 *
 *   importCard(card, options) -> { spec, warnings, a2aVersion }
 *       A card of either version as a raw AgentSpec input to validate and store. Throws
 *       RegistryError `invalid_card` (issues at `a2a_card.<path>`) for a card the registry
 *       cannot use, or under `strict` for any deviation from its version's schema.
 *   exportCard(spec, version) -> card
 *       The card of a stored spec for "1.0" or "0.3", valid strictly against that version.
 *   detectA2aVersion(card) -> "1.0" | "0.3"
 *       The version a card is written for, decided as the A2A JS SDK decides it.
 *   checkCardSchema(card, version) -> [{ path, message }]
 *       The card's deviations from that version's schema ([] when it conforms).
 *   A2A_CARD_SCHEMA_V0_3, A2A_CARD_SCHEMA_V1_0
 *       The two schemas, as JSON Schema (draft-07) objects.
 */
export { importCard, DEFAULT_OWNER_TEAM, MAX_CARD_ISSUES, MAX_CARD_SKILLS, MAX_CARD_WARNINGS } from "./import-card.js";
export type { ImportCardOptions, ImportedCard } from "./import-card.js";
export { exportCard, NATS_BINDING, natsInterfaceUrl, type A2aCard } from "./export-card.js";
export { A2A_VERSIONS, detectA2aVersion, isLegacyProtocolVersion, type A2aVersion } from "./detect-version.js";
export { checkCardSchema, type CardFinding } from "./card-check.js";
export { MAX_CARD_BYTES, MAX_CARD_DEPTH } from "./card-limits.js";
export { SBOM_EXTENSION_URI } from "./sbom-extension.js";
export { skillToCapability } from "./skill-capability.js";
export { A2A_CARD_SCHEMA_V0_3, A2A_CARD_SCHEMA_V0_3_ID } from "./schema-v0-3.js";
export { A2A_CARD_SCHEMA_V1_0, A2A_CARD_SCHEMA_V1_0_ID } from "./schema-v1-0.js";
