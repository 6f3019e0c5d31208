/** Every scenario, in the order a full run takes them (short ones first). */
import type { Scenario } from "../lib/scenario.js";
import { auditScenario } from "./audit.js";
import { clientsScenario } from "./clients.js";
import { coldStartScenario } from "./cold-start.js";
import { discoveryScenario } from "./discovery.js";
import { fleetScenario } from "./fleet.js";
import { fleet1mScenario } from "./fleet-1m.js";
import { lookupScalingScenario } from "./lookup-scaling.js";
import { lookupScenario } from "./lookup.js";
import { mcpScenario } from "./mcp.js";
import { peersScenario } from "./peers.js";
import { regionsScenario } from "./regions.js";
import { registrationScenario } from "./registration.js";
import { registryV2Scenario } from "./registry-v2.js";

export const SCENARIOS: Scenario[] = [lookupScenario, lookupScalingScenario, registrationScenario, registryV2Scenario, coldStartScenario, mcpScenario, discoveryScenario, clientsScenario, auditScenario, fleetScenario, fleet1mScenario, regionsScenario, peersScenario];
