import { describe, expect, it } from "vitest";
import { regionEventSubjects, regionStoredSubject, regionalServerProblem } from "../../../../src/adapters/nats/region-streams.js";
import { subjects } from "../../../../src/protocol/subjects.js";

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
    expect(regionStoredSubject(undefined, "registry.agent.registered.a")).toBe("registry.agent.registered.a");
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
