/**
 * The operator's trust file (REGISTRY_TRUST_FILE): JWKS files are read beside it, and every
 * mistake stops the start with a message naming the file and the problem.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTrustFile } from "../../../../src/adapters/file/trust-file.js";

const dir = mkdtempSync(join(tmpdir(), "trust-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PUBLIC = { kty: "EC", crv: "P-256", kid: "k", alg: "ES256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" };

function write(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

describe("loadTrustFile", () => {
  it("reads a tenant's JWKS file relative to the trust file, and keeps tenants it does not name off", async () => {
    write("acme.jwks.json", { keys: [PUBLIC] });
    const path = write("trust.json", { tenants: { acme: { mode: "require", jwks_file: "acme.jwks.json", signers: [{ kid: "k", publisher: "Acme", agent_types: ["acme-*"] }] } } });
    const roots = await loadTrustFile(path);
    expect(roots.enabled).toBe(true);
    expect(roots.forTenant("acme")?.keys.get("k")?.alg).toBe("ES256");
    expect(roots.forTenant("globex")).toBeUndefined();
    expect(roots.forTenant(null)).toBeUndefined();
  });

  it("names the file and the problem for every mistake", async () => {
    await expect(loadTrustFile(join(dir, "absent.json"))).rejects.toThrow(/trust file .*absent\.json: cannot read/);
    await expect(loadTrustFile(write("broken.json", "{"))).rejects.toThrow(/is not JSON/);
    await expect(loadTrustFile(write("typo.json", { tenants: { acme: { mode: "required", signers: [] } } }))).rejects.toThrow(/tenants\.acme\.mode/);
    await expect(loadTrustFile(write("extra.json", { tenants: { acme: { mode: "off", jwks_url: "https://acme.example/jwks" } } }))).rejects.toThrow(/jwks_url/);
    write("private.jwks.json", { keys: [{ ...PUBLIC, d: "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI" }] });
    const withPrivate = write("private.json", { tenants: { acme: { mode: "require", jwks_file: "private.jwks.json", signers: [{ kid: "k", publisher: "A", agent_types: ["*"] }] } } });
    await expect(loadTrustFile(withPrivate)).rejects.toThrow(/private\.jwks\.json: keys\.0: a private key/);
    const twice = write("twice.json", { tenants: { acme: { mode: "require", jwks: { keys: [PUBLIC, PUBLIC] }, signers: [{ kid: "k", publisher: "A", agent_types: ["*"] }] } } });
    await expect(loadTrustFile(twice)).rejects.toThrow(/key id k is listed twice/);
    const badKey = write("bad-key.json", { tenants: { acme: { mode: "require", jwks: { keys: [{ ...PUBLIC, x: "AAAA" }] }, signers: [{ kid: "k", publisher: "A", agent_types: ["*"] }] } } });
    await expect(loadTrustFile(badKey)).rejects.toThrow(/key k cannot be imported as ES256/);
  });

  it("reads each tenant's approval policy (auto unless manual), with no mode needed beside it, and refuses another value", async () => {
    const path = write("approval.json", { shared: { approval: "manual" }, tenants: { acme: { approval: "manual" }, globex: { mode: "off" } } });
    const roots = await loadTrustFile(path);
    expect(roots.approvalFor("acme")).toBe("manual");
    expect(roots.approvalFor(null)).toBe("manual");
    expect(roots.approvalFor("globex")).toBe("auto");
    expect(roots.approvalFor("initech")).toBe("auto");
    // a policy alone verifies nothing
    expect(roots.enabled).toBe(false);
    await expect(loadTrustFile(write("approval-typo.json", { tenants: { acme: { approval: "manually" } } }))).rejects.toThrow(/tenants\.acme\.approval: .*"auto"\|"manual"/);
    await expect(loadTrustFile(write("approval-type.json", { shared: { approval: true } }))).rejects.toThrow(/shared\.approval/);
  });
});
