/** Every scenario, in the order a full run takes them (cheap ones first). */
import type { Scenario } from "../lib/scenario.js";
import { lookupScenario } from "./lookup.js";

export const SCENARIOS: Scenario[] = [lookupScenario];
