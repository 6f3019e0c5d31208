import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/service.js";
import { peerRegions, regionSettingsProblem, storeNames } from "../../../src/config/region.js";
import { thrownError } from "../registry-error.js";

describe("region settings", () => {
  it("are off by default: one registry, the configured bucket and stream", () => {
    const c = loadConfig();
    expect(c.region).toBeUndefined();
    expect(c.regions).toBeUndefined();
    expect(storeNames(c)).toEqual({ bucket: "agent-registry", eventsStream: "REGISTRY_EVENTS" });
  });

  it("name the region's own bucket and stream after the configured ones", () => {
    const c = loadConfig({ REGISTRY_REGION: "eu", REGISTRY_REGIONS: "eu, us,ap" });
    expect(c.region).toBe("eu");
    expect(c.regions).toEqual(["eu", "us", "ap"]);
    expect(storeNames(c)).toEqual({ bucket: "agent-registry-eu", eventsStream: "REGISTRY_EVENTS_eu" });
    expect(peerRegions(c)).toEqual(["us", "ap"]);
    expect(loadConfig({}, { region: "us" }).region).toBe("us");
  });

  it("refuse what cannot work, naming the setting", () => {
    expect(thrownError(ConfigError, () => loadConfig({ REGISTRY_REGIONS: "eu,us" })).message).toMatch(/REGISTRY_REGIONS needs REGISTRY_REGION/);
    expect(thrownError(ConfigError, () => loadConfig({ REGISTRY_REGION: "ap", REGISTRY_REGIONS: "eu,us" })).message).toMatch(/does not name REGISTRY_REGION \(ap\)/);
    expect(thrownError(ConfigError, () => loadConfig({ REGISTRY_REGION: "eu.west" })).message).toMatch(/REGISTRY_REGION.*not a region name/);
    expect(thrownError(ConfigError, () => loadConfig({ REGISTRY_REGION: "eu", REGISTRY_REGIONS: "eu,us,eu" })).message).toMatch(/names a region twice/);
    expect(regionSettingsProblem({ region: "eu" })).toBeNull();
  });
});
