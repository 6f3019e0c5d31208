import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/service.js";
import { peerRegions, regionSettingsProblem, storeNames } from "../../src/config/region.js";
import { regionEventSubjects, regionStoredSubject, regionalServerProblem } from "../../src/adapters/nats/region-streams.js";
import { subjects } from "../../src/protocol/subjects.js";
import { thrownError } from "./registry-error.js";

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

describe("regional JetStream layout", () => {
  it("stores a region's events under subjects of its own and republishes them on the usual ones", () => {
    const s = subjects("registry");
    const { subjects: stored, republish } = regionEventSubjects("eu", "registry", s.storedEvents);
    expect(stored).toContain("_region.eu.registry.agent.registered.>");
    expect(stored.every((x) => x.startsWith("_region.eu.registry."))).toBe(true);
    // Another region's subjects never overlap: one account refuses overlapping streams.
    const us = regionEventSubjects("us", "registry", s.storedEvents).subjects;
    expect(us.some((x) => stored.includes(x))).toBe(false);
    expect(republish).toEqual({ src: "_region.eu.registry.>", dest: "registry.>" });
    expect(regionStoredSubject("eu", "registry.agent.registered.a")).toBe("_region.eu.registry.agent.registered.a");
  });

  it("refuses a server before 2.10 or outside the region's cluster, in one line", () => {
    const old = regionalServerProblem("eu", { version: "2.9.10", cluster: "eu" });
    expect(old).toMatch(/needs nats-server 2\.10\.0 or newer .*this server is 2\.9\.10/);
    expect(old).not.toContain("\n");
    expect(regionalServerProblem("eu", { version: "2.15.2", cluster: undefined })).toMatch(/is in no cluster/);
    expect(regionalServerProblem("eu", { version: "2.15.2", cluster: "us" })).toMatch(/in cluster "us"/);
    expect(regionalServerProblem("eu", { version: "2.10.0", cluster: "eu" })).toBeNull();
  });
});
