import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, loadConfig, redactedConfig } from "../../../src/config/service.js";
import { loadAuditConfig } from "../../../src/config/audit.js";
import { thrownError } from "../registry-error.js";

const configError = (fn: () => unknown): ConfigError => thrownError(ConfigError, fn);

describe("loadConfig", () => {
  it("gives every default of CONFIG_VARIABLES with no input", () => {
    const config = loadConfig() as Record<string, unknown>;
    for (const v of CONFIG_VARIABLES) expect(config[v.key], v.key).toEqual(v.default);
    expect(config["natsUrl"]).toBe("nats://127.0.0.1:4222");
    expect(config["missedHeartbeats"]).toBe(3);
  });

  it("reads environment variables and coerces them", () => {
    const config = loadConfig({
      NATS_URL: "nats://a:4222,nats://b:4222",
      REGISTRY_REPLICAS: "3",
      REGISTRY_HEARTBEAT_EVENTS: "off",
      REGISTRY_SELF_PRESERVATION_RATIO: "0.25",
      REGISTRY_DUPLICATE_CAPABILITIES: "reject",
      NATS_PASSWORD: "s3cret",
      LOG_LEVEL: "debug",
    });
    expect(config).toMatchObject({
      natsUrl: "nats://a:4222,nats://b:4222",
      replicas: 3,
      heartbeatEvents: false,
      selfPreservationRatio: 0.25,
      duplicateCapabilities: "reject",
      natsPassword: "s3cret",
      logLevel: "debug",
    });
  });

  it("accepts every boolean spelling", () => {
    for (const yes of ["true", "1", "yes", "on"]) expect(loadConfig({ REGISTRY_HEARTBEAT_EVENTS: yes }).heartbeatEvents).toBe(true);
    for (const no of ["false", "0", "no", "off"]) expect(loadConfig({ REGISTRY_HEARTBEAT_EVENTS: no }).heartbeatEvents).toBe(false);
    expect(loadConfig({}, { "heartbeat-events": false }).heartbeatEvents).toBe(false);
  });

  it("treats empty variables as unset", () => {
    const config = loadConfig({ REGISTRY_PREFIX: "", NATS_USER: "", REGISTRY_HTTP_PORT: "" });
    expect(config.prefix).toBe("registry");
    expect(config.natsUser).toBeUndefined();
    expect(config.httpPort).toBe(8080);
  });

  it("lets flags win over the environment and overrides win over both", () => {
    const env = { REGISTRY_PREFIX: "from-env", REGISTRY_HTTP_PORT: "9000", REGISTRY_BUCKET: "env-bucket" };
    const flags = { prefix: "from-flag", "http-port": "9100" };
    const config = loadConfig(env, flags, { httpPort: 0 });
    expect(config.prefix).toBe("from-flag");
    expect(config.httpPort).toBe(0);
    expect(config.bucket).toBe("env-bucket");
  });

  it("names the variable and the flag of a bad value", () => {
    const e = configError(() => loadConfig({ REGISTRY_REPLICAS: "9" }));
    expect(e.message).toMatch(/^invalid configuration:/);
    expect(e.message).toContain("REGISTRY_REPLICAS / --replicas:");
    expect(configError(() => loadConfig({}, { "max-depth": "deep" })).message).toContain("REGISTRY_MAX_DEPTH / --max-depth:");
    expect(configError(() => loadConfig({ REGISTRY_EMBEDDED: "sometimes" })).message).toContain("REGISTRY_EMBEDDED / --embedded:");
    expect(configError(() => loadConfig({ REGISTRY_HEARTBEAT_EVENTS: "maybe" })).message).toContain("REGISTRY_HEARTBEAT_EVENTS");
    expect(configError(() => loadConfig({ REGISTRY_PREFIX: "has space" })).message).toContain("REGISTRY_PREFIX / --prefix:");
  });

  it("reads the ops port's allowed hosts as a list, and names the variable and the entry of a bad one", () => {
    expect(loadConfig({ REGISTRY_HTTP_ALLOWED_HOSTS: "agent-registry, agent-registry.ops.svc ,10.0.0.5" }).httpAllowedHosts).toEqual(["agent-registry", "agent-registry.ops.svc", "10.0.0.5"]);
    expect(loadConfig({}).httpAllowedHosts).toBeUndefined();
    const e = configError(() => loadConfig({ REGISTRY_HTTP_ALLOWED_HOSTS: "agent-registry,agent-registry:8080" }));
    expect(e.message).toContain("REGISTRY_HTTP_ALLOWED_HOSTS / --http-allowed-hosts:");
    expect(e.message).toContain('"agent-registry:8080" is not a host name');
    // The audit mirror's ops port takes the same list, under its own name.
    expect(() => loadAuditConfig({}, { DATABASE_URL: "postgres://x/y", AUDIT_HTTP_ALLOWED_HOSTS: "http://audit" })).toThrow(/AUDIT_HTTP_ALLOWED_HOSTS \/ --http-allowed-hosts: "http:\/\/audit" is not a host name/);
  });

  it("reports every bad value at once", () => {
    const e = configError(() => loadConfig({ REGISTRY_REPLICAS: "0", REGISTRY_LEASE_MS: "5", LOG_LEVEL: "loud" }));
    expect(e.message.split("\n")).toHaveLength(4);
    for (const name of ["REGISTRY_REPLICAS", "REGISTRY_LEASE_MS", "LOG_LEVEL"]) expect(e.message).toContain(name);
  });

  it("refuses a minimum heartbeat interval above the maximum", () => {
    const e = configError(() => loadConfig({ REGISTRY_MIN_HEARTBEAT_INTERVAL_MS: "5000", REGISTRY_MAX_HEARTBEAT_INTERVAL_MS: "1000" }));
    expect(e.message).toContain("REGISTRY_MIN_HEARTBEAT_INTERVAL_MS");
    expect(e.message).toContain("must not exceed REGISTRY_MAX_HEARTBEAT_INTERVAL_MS");
  });

  it("returns a frozen configuration", () => {
    const config = loadConfig();
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { prefix: string }).prefix = "changed";
    }).toThrow(TypeError);
    expect(config.prefix).toBe("registry");
  });
});

describe("redactedConfig", () => {
  it("hides the password and the token and nothing else", () => {
    const config = loadConfig({ NATS_USER: "registry", NATS_PASSWORD: "pw", NATS_TOKEN: "tok", NATS_CREDS: "/etc/x.creds" });
    const shown = redactedConfig(config);
    expect(shown).toMatchObject({ natsUser: "registry", natsPassword: "[redacted]", natsToken: "[redacted]", natsCreds: "/etc/x.creds" });
    expect(JSON.stringify(shown)).not.toContain('"pw"');
    expect(JSON.stringify(shown)).not.toContain("tok\"");
    expect(config.natsPassword).toBe("pw");
  });

  it("hides the web page's token", () => {
    const shown = redactedConfig(loadConfig({ REGISTRY_UI_TOKEN: "page-secret", REGISTRY_UI: "on" }));
    expect(shown).toMatchObject({ ui: true, uiToken: "[redacted]" });
    expect(JSON.stringify(shown)).not.toContain("page-secret");
  });

  it("hides a password or token a URL carries: NATS_URL's user info, DATABASE_URL's user info or ?password=", () => {
    const shown = redactedConfig(
      loadConfig({ NATS_URL: "nats://registry:natspw@nats-1:4222,nats://s3cr3t-token@nats-2:4222", DATABASE_URL: "postgresql://audit:dbpw@db:5432/audit?sslmode=require&password=dbpw2" }),
    );
    expect(shown["natsUrl"]).toBe("nats://registry:[redacted]@nats-1:4222,nats://[redacted]@nats-2:4222");
    expect(shown["databaseUrl"]).toBe("postgresql://audit:[redacted]@db:5432/audit?sslmode=require&password=[redacted]");
    for (const secret of ["natspw", "s3cr3t-token", "dbpw"]) expect(JSON.stringify(shown)).not.toContain(secret);
    expect(redactedConfig(loadConfig())["natsUrl"]).toBe("nats://127.0.0.1:4222");
  });

  it("leaves unset secrets unset", () => {
    const shown = redactedConfig(loadConfig());
    expect(shown["natsPassword"]).toBeUndefined();
    expect(shown["natsToken"]).toBeUndefined();
  });
});

describe("the MCP session settings of serve", () => {
  it("are off by default, read from the environment, and bounded", () => {
    expect(loadConfig()).toMatchObject({ mcpHttpSessions: false, mcpMaxSessions: 1000, mcpSessionIdleMs: 1_800_000 });
    expect(loadConfig({ REGISTRY_MCP_HTTP_SESSIONS: "true", REGISTRY_MCP_MAX_SESSIONS: "20", REGISTRY_MCP_SESSION_IDLE_MS: "60000" })).toMatchObject({
      mcpHttpSessions: true,
      mcpMaxSessions: 20,
      mcpSessionIdleMs: 60000,
    });
    expect(() => loadConfig({ REGISTRY_MCP_MAX_SESSIONS: "0" })).toThrow(ConfigError);
  });
});
