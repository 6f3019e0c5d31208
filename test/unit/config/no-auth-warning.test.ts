import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/service.js";
import { hasCredentials, noAuthWarning } from "../../../src/adapters/nats/nats-connection.js";
import { isLoopbackAuthority } from "../../../src/kit/hosts.js";

describe("the no-auth warning of serve (issue 14, finding 16)", () => {
  it("knows loopback servers by the host nats.js reports", () => {
    for (const s of ["127.0.0.1:4222", "127.10.0.3:4222", "localhost:4222", "nats.localhost:4222", "[::1]:4222", "[::ffff:127.0.0.1]:4222"]) expect(isLoopbackAuthority(s), s).toBe(true);
    for (const s of ["192.0.2.2:4222", "nats:4222", "nats-1.nats.svc:4222", "[fd00::2]:4222", "128.0.0.1:4222", "localhost.example.com:4222"]) expect(isLoopbackAuthority(s), s).toBe(false);
  });

  it("counts every way the registry can authenticate", () => {
    expect(hasCredentials(loadConfig({}))).toBe(false);
    for (const env of [
      { NATS_USER: "registry" },
      { NATS_TOKEN: "t" },
      { NATS_CREDS: "/run/registry.creds" },
      { NATS_NKEY_SEED_FILE: "/run/seed" },
      { NATS_TLS_CERT: "/run/cert.pem" },
      { NATS_URL: "nats://a:4222,nats://registry:secret@b:4222" },
    ]) expect(hasCredentials(loadConfig(env)), JSON.stringify(env)).toBe(true);
  });

  it("warns only without credentials and off loopback, pointing to docs/security.md", () => {
    expect(noAuthWarning("127.0.0.1:4222", false, false)).toBeNull();
    expect(noAuthWarning("nats:4222", true, true)).toBeNull();
    const open = noAuthWarning("nats:4222", false, false);
    expect(open).toMatch(/^connected to NATS at nats:4222 without credentials \(and the server does not ask for any\)/);
    expect(open).toContain("docs/security.md");
    expect(noAuthWarning("nats:4222", false, true)).not.toContain("does not ask");
  });
});
