/**
 * `serve` warns when it connects without credentials to a NATS server another machine can
 * reach (issue 14, finding 16), and stays quiet on loopback. The server listens on every
 * address; the registry dials it once by this machine's own network address.
 */
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, expect, it } from "vitest";
import { withNatsServer, type NatsTestServer } from "../harness/nats.js";
import { startRegistry } from "../harness/registry.js";

const WARNING = /^connected to NATS at .* without credentials/;
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

let server: NatsTestServer;

beforeAll(async () => {
  server = await withNatsServer({ host: "0.0.0.0" });
});
afterAll(async () => {
  await server?.stop();
});

it.skipIf(lanAddress === undefined || process.env.NATS_URL !== undefined)("warns at start when it reaches a non-loopback server without credentials", async () => {
  await using reg = await startRegistry(`nats://${lanAddress}:${server.port}`);
  const warnings = reg.logs.filter((l) => l.level === 40 && WARNING.test(l.msg));
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatchObject({ server: `${lanAddress}:${server.port}`, auth_required: false });
  expect(warnings[0]?.msg).toContain("docs/security.md");
});

it("says nothing on loopback", async () => {
  await using reg = await startRegistry(server.url);
  expect(reg.logs.filter((l) => WARNING.test(l.msg))).toEqual([]);
});
