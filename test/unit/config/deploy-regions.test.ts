/**
 * The deploy files of three regions (deploy/nats/regions/, deploy/regions/docker-compose.yml)
 * agree with the code and with each other: compose runs three nodes per region with that
 * region's config, each registry connects to its own region's nodes with valid settings and a
 * user of that region's config, the configs name the clusters and gateways after the regions and
 * give each region's registry the subjects the code names for that region, and the roles every
 * region shares are the same as deploy/nats/auth.conf's. test/fault/regions-deploy.test.ts runs them.
 */
import { existsSync, readFileSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { regionSubjectRoot } from "../../../src/adapters/nats/region-streams.js";
import { regionBucket } from "../../../src/config/region.js";
import { CONFIG_VARIABLES, loadConfig } from "../../../src/config/service.js";
import { composeNatsNodes, regionsCompose, serviceEnv } from "../../harness/deploy-supercluster.js";

const root = new URL("../../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
const REGIONS = ["eu", "us", "ap"];
const NATS_FLOOR = "2.10.23";
const ENV_NAMES = new Set<string>(CONFIG_VARIABLES.map((v) => v.env));
const services = regionsCompose().services;
const registries = Object.entries(services).filter(([, s]) => serviceEnv(s)["REGISTRY_REGION"] !== undefined);
const regionConf = (region: string) => read(`deploy/nats/regions/${region}.conf`);

/** A `NAME = { ... }` block of a NATS config, up to its closing brace at the start of a line. */
function block(text: string, name: string): string {
  const m = new RegExp(`^${name} = \\{\\n[\\s\\S]*?\\n\\}$`, "m").exec(text);
  if (m === null) throw new Error(`no block ${name}`);
  return m[0];
}

describe("deploy/regions/docker-compose.yml", () => {
  it("runs three NATS nodes per region at or above the version floor, each with its region's config", () => {
    const nodes = composeNatsNodes();
    expect(nodes.map((n) => n.name)).toEqual(REGIONS.flatMap((r) => [1, 2, 3].map((i) => `nats-${r}-${i}`)));
    for (const [name, s] of Object.entries(services).filter(([, s]) => String(s["image"]).startsWith("nats:"))) {
      expect(semver.gte(semver.coerce(String(s["image"]).split(":")[1]) ?? "0.0.0", NATS_FLOOR), `${name} image`).toBe(true);
      expect(s["volumes"]).toContain("../nats:/etc/nats:ro");
      expect(s["volumes"]).toContain(`${name}-data:/data`);
    }
    for (const n of nodes) {
      expect(n.config).toBe(`/etc/nats/regions/${n.region}.conf`);
      expect(n.name.startsWith(`nats-${n.region}-`)).toBe(true);
      expect(existsSync(new URL(`deploy/nats/regions/${n.region}.conf`, root))).toBe(true);
    }
  });

  it("runs two registry replicas per region, each connected to its own region's nodes with valid settings", () => {
    expect(registries.map(([name]) => name)).toEqual(REGIONS.flatMap((r) => [`registry-${r}-1`, `registry-${r}-2`]));
    const nodes = composeNatsNodes();
    for (const [name, s] of registries) {
      const env = serviceEnv(s);
      for (const key of Object.keys(env)) if (/^(REGISTRY_|NATS_)/.test(key) || key === "LOG_LEVEL") expect(ENV_NAMES.has(key), `${name}: ${key}`).toBe(true);
      const config = loadConfig(env);
      const region = config.region!;
      expect(name.startsWith(`registry-${region}-`)).toBe(true);
      expect(config.regions).toEqual(REGIONS);
      expect(config.replicas).toBe(3);
      expect(config.embedded).toBe("never");
      expect(config.replicaName).toBe(name);
      expect(config.natsUrl.split(",").map((u) => new URL(u).hostname)).toEqual(nodes.filter((n) => n.region === region).map((n) => n.name));
      // A user of its region's config, with that password.
      expect(regionConf(region)).toMatch(new RegExp(`user: "${env["NATS_USER"]}",\\s*password: "${env["NATS_PASSWORD"]}"`));
      // The registry's subjects in the region's config are the defaults the code builds names from.
      expect(config.prefix).toBe("registry");
      expect(config.bucket).toBe("agent-registry");
    }
  });
});

describe("deploy/nats/regions/", () => {
  it("names each region's cluster and gateway after the region, routes its three nodes and gateways to every other region", () => {
    for (const region of REGIONS) {
      const text = regionConf(region);
      expect(text).toMatch(new RegExp(`^cluster \\{\\n  name: "${region}"$`, "m"));
      expect(text).toMatch(new RegExp(`^gateway \\{\\n  name: "${region}"$`, "m"));
      expect(text).toMatch(/^server_name: \$NATS_SERVER_NAME$/m);
      expect(text).toMatch(/^\s*sync_interval: always$/m);
      expect(text).toMatch(/^include "\.\/roles\.conf"$/m);
      for (const i of [1, 2, 3]) expect(text).toContain(`@nats-${region}-${i}:6222"`);
      for (const other of REGIONS.filter((r) => r !== region)) {
        expect(text).toContain(`{ name: "${other}", urls: [`);
        for (const i of [1, 2, 3]) expect(text).toContain(`@nats-${other}-${i}:7222"`);
      }
    }
  });

  it("gives each region's registry its own region's event subjects and bucket, and denies every other region's", () => {
    for (const region of REGIONS) {
      const registry = block(regionConf(region), `REGISTRY_${region.toUpperCase()}`);
      const own = [`"${regionSubjectRoot(region)}.>"`, `"$KV.${regionBucket("agent-registry", region)}.>"`];
      for (const s of own) expect(registry).toContain(s);
      for (const other of REGIONS.filter((r) => r !== region)) {
        const deny = /deny: \[(.*)\]/.exec(registry)?.[1] ?? "";
        expect(deny).toContain(`"${regionSubjectRoot(other)}.>"`);
        expect(deny).toContain(`"$KV.${regionBucket("agent-registry", other)}.>"`);
      }
      expect(regionConf(region)).toMatch(new RegExp(`user: "registry",\\s*password: "[^"]+",\\s*permissions: \\$REGISTRY_${region.toUpperCase()} \\}`));
    }
  });

  it("keeps the agents' and coordinators' permissions identical to deploy/nats/auth.conf's", () => {
    const roles = read("deploy/nats/regions/roles.conf");
    const single = read("deploy/nats/auth.conf");
    for (const name of ["AGENT_CODE_REVIEWER", "AGENT_BUG_FIXER", "COORDINATOR_PERMISSIONS"]) expect(block(roles, name), name).toBe(block(single, name));
    // No role of roles.conf may store events as a region.
    expect(roles).not.toMatch(/allow: \[[^\]]*_region\./);
  });
});
