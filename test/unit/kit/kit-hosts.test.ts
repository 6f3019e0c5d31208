/**
 * src/kit/hosts.ts, the one host module the NATS connection check, the MCP guard and the ops
 * port share: the loopback rule both of the former twins applied (isLoopbackServer of
 * nats-connection.ts took 127.0.0.999 and missed URL's hex form of a mapped address;
 * isLoopback of the MCP guard missed names under .localhost), Host parsing, allowlists and the
 * configured host lists.
 */
import { describe, expect, it } from "vitest";
import { allowedHostsFor, hostAllowed, hostListProblem, hostName, isLoopbackAuthority, isLoopbackHost, MAX_ALLOWED_HOSTS } from "../../../src/kit/hosts.js";

describe("kit/hosts", () => {
  it("knows loopback hosts however they are written, and only them", () => {
    for (const h of ["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.255.0.9", "::1", "[::1]", "::ffff:127.0.0.1", "[::ffff:7f00:1]"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["127.0.0.1.evil.com", "127.evil.com", "127.0.0.1evil", "127.0.0.256", "127.0.0.999", "127.0.0", ".localhost", "localhost.example.com", "10.0.0.5", "0.0.0.0", "::", "[fd00::2]", "::ffff:10.0.0.1"]) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
    // URL normalises a mapped address to hex: an Origin of http://[::ffff:127.0.0.1] arrives so.
    expect(isLoopbackHost(new URL("http://[::ffff:127.0.0.1]:1").hostname)).toBe(true);
    expect(isLoopbackAuthority("[::1]:4222")).toBe(true);
    expect(isLoopbackAuthority("127.0.0.999:4222")).toBe(false);
  });

  it("reads the host name of an authority", () => {
    expect(hostName("Example.COM:8080")).toBe("example.com");
    expect(hostName("[::1]:3001")).toBe("[::1]");
    expect(hostName("10.0.0.5")).toBe("10.0.0.5");
  });

  it("allows loopback names, the bound address or, bound to every interface, the addresses given, and the names added", () => {
    expect(allowedHostsFor("10.0.0.5", ["Registry.Internal"], ["10.9.9.9"])).toEqual(["localhost", "127.0.0.1", "[::1]", "10.0.0.5", "registry.internal"]);
    expect(allowedHostsFor("0.0.0.0", [], ["127.0.0.1", "10.1.2.3", "fd00::7"])).toEqual(["localhost", "127.0.0.1", "[::1]", "10.1.2.3", "[fd00::7]"]);
    expect(allowedHostsFor("::", [])).toEqual(["localhost", "127.0.0.1", "[::1]"]);
    const allowed = allowedHostsFor("0.0.0.0", ["registry"], ["10.1.2.3"]);
    expect(hostAllowed("10.1.2.3:8080", allowed)).toBe(true);
    expect(hostAllowed("REGISTRY:8080", allowed)).toBe(true);
    expect(hostAllowed("registry.attacker.example", allowed)).toBe(false);
    expect(hostAllowed(undefined, allowed)).toBe(false);
  });

  it("checks a configured host list name by name, and bounds it", () => {
    expect(hostListProblem(["agent-registry", "agent-registry.ops.svc.cluster.local", "10.0.0.5", "[fd00::5]", "fd00::6"])).toBeNull();
    for (const bad of ["registry:8080", "http://registry", "*.example.com", "registry/x", "two words"]) expect(hostListProblem([bad]), bad).toContain("is not a host name");
    expect(hostListProblem(Array.from({ length: MAX_ALLOWED_HOSTS + 1 }, (_, i) => `h${i}`))).toContain(`at most ${MAX_ALLOWED_HOSTS}`);
  });
});
