/**
 * The deployment files agree with the code and with each other: env names exist in
 * src/config/service.ts, ports match the Dockerfile, dashboards and alerts use real metrics, and the
 * NATS image is new enough. Nothing here needs Docker or a cluster.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { createMetrics } from "../../../src/adapters/http/metrics.js";
import { CONFIG_VARIABLES, loadConfig } from "../../../src/config/service.js";
import { AUDIT_VARIABLES, loadAuditConfig } from "../../../src/config/audit.js";
import { createAuditMetrics } from "../../../src/audit/metrics.js";
import { SERVICE_NODE_FLAGS } from "../../../src/node-flags.js";
import { subjectIssues } from "../../../src/domain/spec/subject-rules.js";
import { allowedHostsFor, isWildcardBind } from "../../../src/kit/hosts.js";
import { exampleSpecs } from "../fixtures.js";

const root = new URL("../../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
const exists = (path: string) => existsSync(new URL(path, root));

type Json = Record<string, any>;

const ENV_NAMES = new Set<string>(CONFIG_VARIABLES.map((v) => v.env));
const NATS_FLOOR = "2.10.23";
const dockerfile = read("Dockerfile");
// Merge keys (<<: *anchor) are how compose shares settings; YAML 1.2 needs them switched on.
const compose = parse(read("docker-compose.yml"), { merge: true }) as Json;
const services = compose["services"] as Record<string, Json>;
// The audit mirror's manifest is checked on its own below.
const k8s = readdirSync(new URL("deploy/k8s/", root))
  .filter((f) => f.endsWith(".yaml") && f !== "audit.yaml")
  .flatMap((f) => parseAllDocuments(read(`deploy/k8s/${f}`)).map((d) => d.toJS() as Json));
const byKind = (kind: string) => k8s.filter((d) => d["kind"] === kind);
const deployment = byKind("Deployment")[0] as Json;
const container = deployment["spec"]["template"]["spec"]["containers"][0] as Json;
const configMap = byKind("ConfigMap")[0] as Json;

const natsServices = Object.entries(services).filter(([, s]) => String(s["image"]).startsWith("nats:"));
const registryServices = Object.entries(services).filter(([, s]) => s["environment"]?.["NATS_URL"] !== undefined && s["command"]?.[0] !== "audit");
const auditK8s = parseAllDocuments(read("deploy/k8s/audit.yaml")).map((d) => d.toJS() as Json);

function exposedPorts(): number[] {
  return [...dockerfile.matchAll(/^EXPOSE\s+(.+)$/gm)].flatMap((m) => (m[1] as string).split(/\s+/).map((p) => Number.parseInt(p, 10)));
}

/** The env names a compose service or k8s container sets. */
function composeEnv(service: Json): Record<string, string> {
  return Object.fromEntries(Object.entries(service["environment"] ?? {}).map(([k, v]) => [k, String(v)]));
}

function assertKnownEnv(names: Iterable<string>, where: string): void {
  for (const name of names) {
    if (/^(REGISTRY_|NATS_)/.test(name) || name === "LOG_LEVEL") expect(ENV_NAMES.has(name), `${where}: ${name} is not in CONFIG_VARIABLES`).toBe(true);
  }
}

async function metricNames(): Promise<Set<string>> {
  const names = new Set<string>();
  // The audit mirror's metrics live on the registry's /metrics too when serve runs it.
  for (const m of [...(await createMetrics().registry.getMetricsAsJSON()), ...(await createAuditMetrics(undefined, false).registry.getMetricsAsJSON())]) {
    names.add(m.name);
    if (String(m.type) === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(m.name + suffix);
  }
  return names;
}

const usedMetrics = (exprs: string[]) => new Set(exprs.flatMap((e) => [...e.matchAll(/\bagent_registry_[a-z0-9_]+/g)].map((m) => m[0])));

describe("Dockerfile", () => {
  it("exposes the default ops port, checks /healthz with node, and runs as non-root", () => {
    const httpPort = CONFIG_VARIABLES.find((v) => v.key === "httpPort")?.default;
    expect(exposedPorts()).toEqual([httpPort]);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "-e", ".*\/healthz/ms);
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(JSON.parse(entrypoint ?? "null")).toEqual(["node", ...SERVICE_NODE_FLAGS, "dist/cli/main.js"]);
    expect(dockerfile).toMatch(/^CMD \["serve"\]$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const user = /^USER\s+(\S+)$/m.exec(dockerfile)?.[1];
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
  });

  it("gives the agent-registry command the service's V8 flags in its #! line", () => {
    // `env -S` splits the rest of the line (GNU coreutils 8.30+, BSD and macOS env).
    const first = read("src/cli/main.ts").split("\n", 1)[0];
    expect(first).toBe(["#!/usr/bin/env -S node", ...SERVICE_NODE_FLAGS].join(" "));
  });

  it("starts node with the service's V8 flags, as npm start does", () => {
    const start = (JSON.parse(read("package.json")) as Json)["scripts"]["start"] as string;
    // `exec`: npm's shell becomes the service, so the SIGTERM npm forwards reaches it (npm-start.test.ts).
    expect(start).toBe(["exec", "node", ...SERVICE_NODE_FLAGS, "dist/cli/main.js", "serve"].join(" "));
  });

  it("runs on a Node version that package.json engines accepts", () => {
    const image = /^ARG NODE_IMAGE=node:(\d+)/m.exec(dockerfile)?.[1];
    const engines = (JSON.parse(read("package.json")) as Json)["engines"]["node"] as string;
    expect(semver.satisfies(`${image}.99.0`, engines)).toBe(true);
  });
});

describe("docker-compose.yml", () => {
  it("runs three NATS nodes at or above the version floor, each with its config and a data volume", () => {
    expect(natsServices.map(([name]) => name).sort()).toEqual(["nats-1", "nats-2", "nats-3"]);
    for (const [name, s] of natsServices) {
      const tag = String(s["image"]).split(":")[1] ?? "";
      expect(semver.gte(semver.coerce(tag) ?? "0.0.0", NATS_FLOOR), `${name} image ${s["image"]}`).toBe(true);
      expect(s["command"]).toEqual(["-c", `/etc/nats/cluster/${name}.conf`]);
      expect(s["volumes"]).toContain("./deploy/nats:/etc/nats:ro");
      expect(s["volumes"]).toContain(`${name}-data:/data`);
      expect(exists(`deploy/nats/cluster/${name}.conf`)).toBe(true);
    }
  });

  it("runs two registry replicas whose env names and values are valid configuration", () => {
    expect(registryServices.map(([name]) => name).sort()).toEqual(["registry-1", "registry-2"]);
    const replicaNames = new Set<string>();
    for (const [name, s] of registryServices) {
      const env = composeEnv(s);
      assertKnownEnv(Object.keys(env), `compose ${name}`);
      const config = loadConfig(env);
      expect(config.replicas).toBe(3);
      expect(config.embedded).toBe("never");
      expect(config.natsUrl.split(",").map((u) => new URL(u).hostname).sort()).toEqual(natsServices.map(([n]) => n).sort());
      expect(s["ports"]).toEqual([expect.stringMatching(new RegExp(`^\\d+:${config.httpPort}$`))]);
      expect(exposedPorts()).toContain(config.httpPort);
      // the registry file is mounted from the repository at the path REGISTRY_FILE names
      const mount = (s["volumes"] as string[]).find((v) => v.split(":")[1] === config.registryFile);
      expect(mount, `${name} mounts ${config.registryFile}`).toBeDefined();
      expect(exists((mount as string).split(":")[0] as string)).toBe(true);
      replicaNames.add(String(config.replicaName));
    }
    expect(replicaNames.size).toBe(2);
  });

  it("turns the subject policy on, and the example registry file and auth.conf follow it", () => {
    const auth = read("deploy/nats/auth.conf");
    for (const [name, s] of registryServices) {
      const config = loadConfig(composeEnv(s));
      expect(config.subjectPolicy, name).toBe("agent.tasks.{agent_type}");
      expect(config.plainTenantScope, name).toBe("refuse");
      for (const spec of exampleSpecs()) expect(subjectIssues(spec.agent_type, spec.nats_subject, config), spec.agent_type).toEqual([]);
    }
    // Each agent user of auth.conf may subscribe to exactly the subject the policy gives it.
    for (const m of auth.matchAll(/"registry\.register\.([a-z0-9-]+)"/g)) expect(auth).toContain(`"agent.tasks.${m[1]}"`);
    expect(loadConfig({ ...(configMap["data"] as Record<string, string>), NATS_PASSWORD: "x" }).subjectPolicy).toBe("agent.tasks.{agent_type}");
    expect(loadConfig({ ...(configMap["data"] as Record<string, string>), NATS_PASSWORD: "x" }).plainTenantScope).toBe("refuse");
  });

  it("logs the registry in with a user of auth.conf", () => {
    const auth = read("deploy/nats/auth.conf");
    for (const [, s] of registryServices) {
      const env = composeEnv(s);
      expect(auth).toContain(`user: "${env["NATS_USER"]}"`);
      expect(auth).toMatch(new RegExp(`user: "${env["NATS_USER"]}",\\s*password: "${env["NATS_PASSWORD"]}"`));
    }
  });

  it("has Prometheus scrape every registry replica on its ops port", () => {
    const prom = parse(read("deploy/prometheus/prometheus.yml")) as Json;
    const job = (prom["scrape_configs"] as Json[]).find((j) => j["job_name"] === "agent-registry") as Json;
    const targets = (job["static_configs"] as Json[]).flatMap((c) => c["targets"] as string[]);
    const expected = registryServices.map(([name, s]) => `${name}:${loadConfig(composeEnv(s)).httpPort}`);
    expect(targets.sort()).toEqual(expected.sort());
    // The ops port answers only Host names it knows: each replica answers the name Prometheus scrapes it by.
    for (const [name, s] of registryServices) {
      const config = loadConfig(composeEnv(s));
      expect(allowedHostsFor(config.httpHost, config.httpAllowedHosts ?? []), name).toContain(name);
    }
    expect(services["prometheus"]?.["volumes"]).toContain("./deploy/prometheus:/etc/prometheus:ro");
    expect(prom["rule_files"]).toEqual(["/etc/prometheus/alerts.yml"]);
  });
});

describe("NATS cluster configs", () => {
  it("route between the three compose services, fsync every write, and include auth.conf", () => {
    for (const [name] of natsServices) {
      const conf = read(`deploy/nats/cluster/${name}.conf`);
      expect(conf).toMatch(new RegExp(`server_name: "${name}"`));
      expect(conf).toMatch(/^\s*sync_interval: always$/m);
      expect(conf).toMatch(/store_dir: "\/data\/jetstream"/);
      for (const [peer] of natsServices) expect(conf).toContain(`@${peer}:6222"`);
      expect(conf).toMatch(/^include "\.\.\/auth\.conf"$/m);
    }
  });
});

describe("Kubernetes manifests", () => {
  it("has a Deployment, Service, ConfigMap and PodDisruptionBudget selecting the same pods", () => {
    expect(k8s.map((d) => d["kind"]).sort()).toEqual(["ConfigMap", "Deployment", "PodDisruptionBudget", "Service"]);
    const podLabels = deployment["spec"]["template"]["metadata"]["labels"] as Record<string, string>;
    for (const selector of [
      deployment["spec"]["selector"]["matchLabels"],
      byKind("Service")[0]?.["spec"]["selector"],
      byKind("PodDisruptionBudget")[0]?.["spec"]["selector"]["matchLabels"],
    ] as Record<string, string>[]) {
      for (const [k, v] of Object.entries(selector)) expect(podLabels[k]).toBe(v);
    }
    expect(deployment["spec"]["replicas"]).toBe(2);
    expect(byKind("PodDisruptionBudget")[0]?.["spec"]["minAvailable"]).toBe(1);
  });

  it("uses only configuration variables that exist, with valid values", () => {
    const data = configMap["data"] as Record<string, string>;
    assertKnownEnv(Object.keys(data), "ConfigMap");
    assertKnownEnv((container["env"] as Json[]).map((e) => e["name"] as string), "Deployment env");
    expect(container["envFrom"]).toEqual([{ configMapRef: { name: configMap["metadata"]["name"] } }]);
    const config = loadConfig({ ...data, NATS_PASSWORD: "from-secret", REGISTRY_REPLICA_NAME: "pod" });
    expect(config.replicas).toBe(3);
    expect(config.embedded).toBe("never");
  });

  it("probes /healthz and /readyz on the ops port the Dockerfile exposes", () => {
    const httpPort = loadConfig(configMap["data"] as Record<string, string>).httpPort;
    const ports = container["ports"] as Json[];
    const portOf = (p: string | number) => (typeof p === "number" ? p : (ports.find((x) => x["name"] === p)?.["containerPort"] as number));
    expect(ports.map((p) => p["containerPort"])).toEqual([httpPort]);
    expect(exposedPorts()).toContain(httpPort);
    for (const [probe, path] of [["livenessProbe", "/healthz"], ["readinessProbe", "/readyz"], ["startupProbe", "/healthz"]] as const) {
      expect(container[probe]["httpGet"]["path"], probe).toBe(path);
      expect(portOf(container[probe]["httpGet"]["port"]), probe).toBe(httpPort);
    }
    const service = byKind("Service")[0] as Json;
    expect(portOf(service["spec"]["ports"][0]["targetPort"])).toBe(httpPort);
    expect(Number(deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"])).toBe(httpPort);
    // The ops port answers only Host names it knows. Probes and annotation scrapes name the pod's
    // IP (no host or Host header set here), which a wildcard bind answers; the Service's name is listed.
    const config = loadConfig(configMap["data"] as Record<string, string>);
    expect(isWildcardBind(config.httpHost)).toBe(true);
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
      expect(container[probe]["httpGet"]["host"], probe).toBeUndefined();
      expect(container[probe]["httpGet"]["httpHeaders"], probe).toBeUndefined();
    }
    expect(config.httpAllowedHosts).toContain(service["metadata"]["name"]);
  });

  it("runs as a non-root user without privilege escalation", () => {
    const pod = deployment["spec"]["template"]["spec"] as Json;
    expect(pod["securityContext"]["runAsNonRoot"]).toBe(true);
    expect(pod["securityContext"]["runAsUser"]).toBeGreaterThan(0);
    expect(container["securityContext"]["allowPrivilegeEscalation"]).toBe(false);
    expect(container["securityContext"]["readOnlyRootFilesystem"]).toBe(true);
  });
});

describe("dashboard and alerts", () => {
  const dashboard = JSON.parse(read("deploy/grafana/agent-registry-dashboard.json")) as Json;
  const dashboardExprs = (dashboard["panels"] as Json[]).flatMap((p) => ((p["targets"] ?? []) as Json[]).map((t) => String(t["expr"])));
  const alertRules = (parse(read("deploy/prometheus/alerts.yml")) as Json)["groups"].flatMap((g: Json) => g["rules"]) as Json[];

  it("the dashboard only uses metrics that createMetrics() registers, and covers the key ones", async () => {
    const known = await metricNames();
    const used = usedMetrics(dashboardExprs);
    for (const name of used) expect(known.has(name), `dashboard uses unknown metric ${name}`).toBe(true);
    for (const name of [
      "agent_registry_agents",
      "agent_registry_requests_total",
      "agent_registry_request_duration_seconds_bucket",
      "agent_registry_evictions_total",
      "agent_registry_view_lag_revisions",
      "agent_registry_evictor_leader",
      "agent_registry_nats_connected",
    ]) {
      expect(used.has(name), `dashboard lacks ${name}`).toBe(true);
    }
    const ids = (dashboard["panels"] as Json[]).map((p) => p["id"]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("the alert rules only use metrics that createMetrics() registers, and each is documented", async () => {
    const known = await metricNames();
    for (const name of usedMetrics(alertRules.map((r) => String(r["expr"])))) {
      expect(known.has(name), `alerts.yml uses unknown metric ${name}`).toBe(true);
    }
    const ops = read("docs/operations.md");
    for (const rule of alertRules) {
      expect(rule["annotations"]?.["summary"], rule["alert"]).toBeTruthy();
      expect(ops, `docs/operations.md does not explain ${rule["alert"]}`).toContain(rule["alert"]);
    }
  });
});

describe("the audit mirror's deploy files", () => {
  const AUDIT_ENV = new Set<string>([...AUDIT_VARIABLES.map((v) => v.env), "NATS_URL", "NATS_USER", "NATS_PASSWORD", "NATS_INBOX_PREFIX"]);
  const auth = read("deploy/nats/auth.conf");

  /** The mirror logs in as a user of auth.conf, with the inbox prefix that user may read, and its settings load. */
  function checkEnv(env: Record<string, string>, where: string): void {
    for (const name of Object.keys(env)) expect(AUDIT_ENV.has(name), `${where}: ${name}`).toBe(true);
    expect(auth).toContain(`user: "${env["NATS_USER"]}"`);
    expect(auth).toContain(`"${env["NATS_INBOX_PREFIX"]}.>"`);
    const config = loadAuditConfig({}, { ...env, DATABASE_URL: env["DATABASE_URL"]?.startsWith("postgres") ? env["DATABASE_URL"] : "postgres://from-secret/audit" });
    // The image's HEALTHCHECK asks the ops port the Dockerfile exposes.
    expect(exposedPorts()).toContain(config.httpPort);
  }

  it("compose runs PostgreSQL and the mirror against it, logged in as the audit user", () => {
    const audit = services["audit"] as Json;
    expect(audit["command"]).toEqual(["audit"]);
    const env = composeEnv(audit);
    checkEnv(env, "compose audit");
    expect(auth).toMatch(new RegExp(`user: "audit",\\s*password: "${env["NATS_PASSWORD"]}"`));
    const pg = services["postgres"] as Json;
    const db = new URL(env["DATABASE_URL"]!);
    expect(db.hostname).toBe("postgres");
    expect(decodeURIComponent(db.username)).toBe(pg["environment"]["POSTGRES_USER"]);
    expect(decodeURIComponent(db.password)).toBe(pg["environment"]["POSTGRES_PASSWORD"]);
    expect(db.pathname).toBe(`/${pg["environment"]["POSTGRES_DB"]}`);
    const prom = parse(read("deploy/prometheus/prometheus.yml")) as Json;
    const job = (prom["scrape_configs"] as Json[]).find((j) => j["job_name"] === "agent-registry-audit") as Json;
    const auditConfig = loadAuditConfig({}, { DATABASE_URL: "postgres://x/y", ...env });
    expect(job["static_configs"][0]["targets"]).toEqual([`audit:${auditConfig.httpPort}`]);
    expect(allowedHostsFor(auditConfig.httpHost, auditConfig.httpAllowedHosts ?? [])).toContain("audit");
  });

  it("k8s runs two mirrors with probes on the ops port and secrets for the URL and the password", () => {
    const [deploymentOfAudit] = auditK8s.filter((d) => d["kind"] === "Deployment") as Json[];
    expect(deploymentOfAudit?.["spec"]["replicas"]).toBe(2);
    const c = deploymentOfAudit!["spec"]["template"]["spec"]["containers"][0] as Json;
    expect(c["args"]).toEqual(["audit"]);
    const env = Object.fromEntries((c["env"] as Json[]).map((e) => [e["name"], e["value"] ?? "from-secret"])) as Record<string, string>;
    checkEnv(env, "k8s audit");
    expect((c["env"] as Json[]).find((e) => e["name"] === "DATABASE_URL")?.["valueFrom"]?.["secretKeyRef"]).toBeDefined();
    const port = (c["ports"] as Json[])[0]?.["containerPort"];
    expect(port).toBe(loadAuditConfig({}, { ...env, DATABASE_URL: "postgres://x/y" }).httpPort);
    // Its probes name the pod's IP, which the ops port answers when bound to every interface.
    expect(isWildcardBind(loadAuditConfig({}, { ...env, DATABASE_URL: "postgres://x/y" }).httpHost)).toBe(true);
    expect(c["livenessProbe"]["httpGet"]["path"]).toBe("/healthz");
    expect(c["readinessProbe"]["httpGet"]["path"]).toBe("/readyz");
  });
});
