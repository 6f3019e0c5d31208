/**
 * The service's embedding API (`import { createRegistry, loadConfig } from "agent-registry"`):
 * build a registry from a configuration, start it, stop it. Values first, then types, as
 * nats.js's mod.ts does. Agents and coordinators use the SDK (`agent-registry/client`) instead,
 * which loads none of this.
 */
export { createLogger, createRegistry, RegistryState } from "./main.js";
export { CONFIG_VARIABLES, ConfigError, loadConfig, redactedConfig } from "./config/service.js";
export { ErrorCode, ERROR_CATALOGUE, RegistryError } from "./domain/errors.js";
export { packageVersion } from "./version.js";

export type { AgentRegistry, RegistryDeps, ViewReader } from "./main.js";
export type { Config, ConfigInput } from "./config/service.js";
export type { HealthCheck, HealthReport } from "./kit/ops-server.js";
export type { RegistryMetrics } from "./adapters/http/metrics.js";
export type { Clock } from "./service/clock.js";
export type { Logger, LogFn } from "./kit/logger.js";
export type * from "./protocol/index.js";
