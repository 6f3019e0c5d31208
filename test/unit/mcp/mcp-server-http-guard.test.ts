/**
 * The HTTP endpoint's guard (src/mcp/http-guard.ts): Host names (DNS rebinding), Origins, and
 * the bearer token, on headers as node:http hands them over.
 */
import { describe, expect, it } from "vitest";
import { refusal, type HttpGuardOptions } from "../../../src/mcp/http-guard.js";
import { allowedHostsFor, hostName, isLoopbackHost } from "../../../src/kit/hosts.js";

const loopback: HttpGuardOptions = { allowedHosts: allowedHostsFor("127.0.0.1", []), allowedOrigins: [] };

describe("http guard", () => {
  it("reads the host name of a Host header, with or without port, IPv6 included", () => {
    expect(hostName("Example.COM:8080")).toBe("example.com");
    expect(hostName("localhost")).toBe("localhost");
    expect(hostName("[::1]:3001")).toBe("[::1]");
  });

  it("allows the loopback names and the bind address, not a wildcard bind's address, plus the names given", () => {
    expect(allowedHostsFor("127.0.0.1", [])).toEqual(["localhost", "127.0.0.1", "[::1]"]);
    expect(allowedHostsFor("0.0.0.0", ["Registry.Internal"])).toEqual(["localhost", "127.0.0.1", "[::1]", "registry.internal"]);
    expect(allowedHostsFor("::1", [])).toEqual(["localhost", "127.0.0.1", "[::1]"]);
    expect(allowedHostsFor("10.0.0.5", [])).toContain("10.0.0.5");
    expect(isLoopbackHost("127.0.0.2")).toBe(true);
    expect(isLoopbackHost("10.0.0.5")).toBe(false);
    // Names that only start like a loopback address resolve wherever their owner says.
    for (const name of ["127.0.0.1.evil.com", "127.evil.com", "127.0.0.1evil", "127.0.0.256", "127.0.0"]) expect(isLoopbackHost(name), name).toBe(false);
  });

  it("refuses a Host that names another site, or none", () => {
    expect(refusal({ host: "127.0.0.1:3001" }, loopback)).toBeNull();
    expect(refusal({ host: "127.0.0.1:3001", origin: "http://127.0.0.1.evil.com" }, loopback)).toMatchObject({ status: 403 });
    expect(refusal({ host: "127.0.0.1:3001", origin: "http://127.0.0.7:5173" }, loopback)).toBeNull();
    expect(refusal({ host: "localhost:3001" }, loopback)).toBeNull();
    expect(refusal({ host: "attacker.example:3001" }, loopback)).toMatchObject({ status: 403, message: expect.stringContaining("attacker.example") });
    expect(refusal({}, loopback)?.status).toBe(403);
  });

  it("allows no Origin (not a browser) and loopback origins by default; only the listed ones once a list is given", () => {
    expect(refusal({ host: "localhost:1" }, loopback)).toBeNull();
    expect(refusal({ host: "localhost:1", origin: "http://localhost:6274" }, loopback)).toBeNull();
    expect(refusal({ host: "localhost:1", origin: "https://attacker.example" }, loopback)?.status).toBe(403);
    expect(refusal({ host: "localhost:1", origin: "null" }, loopback)?.status).toBe(403);
    const listed = { ...loopback, allowedOrigins: ["https://console.example.com/"] };
    expect(refusal({ host: "localhost:1", origin: "https://console.example.com" }, listed)).toBeNull();
    expect(refusal({ host: "localhost:1", origin: "http://localhost:6274" }, listed)?.status).toBe(403);
  });

  it("with a token, wants it as a bearer token, and says so in WWW-Authenticate", () => {
    const guarded = { ...loopback, token: "s3cret" };
    expect(refusal({ host: "localhost", authorization: "Bearer s3cret" }, guarded)).toBeNull();
    expect(refusal({ host: "localhost", authorization: "bearer  s3cret" }, guarded)).toBeNull();
    expect(refusal({ host: "localhost" }, guarded)).toEqual({
      status: 401,
      message: "a bearer token is required",
      headers: { "WWW-Authenticate": 'Bearer realm="agent-registry"' },
    });
    expect(refusal({ host: "localhost", authorization: "Bearer s3cre" }, guarded)).toMatchObject({ status: 401, message: "the bearer token is not valid" });
    expect(refusal({ host: "localhost", authorization: "Basic czNjcmV0" }, guarded)?.status).toBe(401);
    // The Host check comes first: a rebinding page learns nothing about the token.
    expect(refusal({ host: "attacker.example", authorization: "Bearer s3cret" }, guarded)?.status).toBe(403);
  });
});
