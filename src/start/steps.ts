/**
 * The steps of a registry start, in the order main.ts runs them. Each step opens one thing,
 * registers its close on the teardown stack as soon as it exists, and returns what later steps
 * need, so no step reaches for something that may not be there yet. One file per concern; this
 * one is their index.
 */
export type { ConnectionEvents, Nats, RuntimeStatus, StartContext, Stores, UseCases } from "./context.js";
export { startSchemaChecks, startPayloadChecks, awaitSchemaWorkers } from "./checks.js";
export type { SchemaChecksStep } from "./checks.js";
export { listenOps, serveAgentDocuments, openEndpoints } from "./endpoints.js";
export { connectNats } from "./nats.js";
export { openLeaseStore, openStores, startPublisher } from "./stores.js";
export { readCardSigner, readTrustRoots } from "./trust.js";
export { watchTrustRoots } from "./trust-reload.js";
export { buildUseCases, startFanout, loadView } from "./use-cases.js";
export { readRegistryFile, applyRegistryFile } from "./registry-file.js";
export type { StartRegistryFile } from "./registry-file.js";
export { followRegions } from "./regions.js";
export { serve } from "./serve.js";
export { serveMcp } from "./mcp.js";
export { serveAudit } from "./audit.js";
