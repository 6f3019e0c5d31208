/**
 * `agent-registry discovery` as a process: it reads its settings from flags and variables,
 * logs where it listens (never the token), serves the fleet, stops on SIGTERM with exit code
 * 0, and refuses a setting that is not one with exit code 2 naming it.
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../harness/cli.js";
import { startDiscoveryFleet, type DiscoveryFleet } from "../harness/discovery.js";
import { CLI_FROM_SOURCE } from "../harness/mcp.js";
import { waitFor } from "../harness/wait.js";

const TOKEN = "cli-discovery-s3cret";
let fleet: DiscoveryFleet;
let natsUrl: string;

function startCli(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [...CLI_FROM_SOURCE, "discovery", "--nats", natsUrl, "--prefix", fleet.prefix, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

beforeAll(async () => {
  fleet = await startDiscoveryFleet();
  natsUrl = fleet.natsUrl;
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

describe("agent-registry discovery", () => {
  it("serves the fleet behind its token, logs without it, and stops with 0 on SIGTERM", async () => {
    const cli = startCli(["--http-port", "0", "--publisher", "example.com"], { REGISTRY_DISCOVERY_TOKEN: TOKEN });
    let url = "";
    try {
      await waitFor(
        () => {
          if (cli.child.exitCode !== null) throw new Error(`exited with ${cli.child.exitCode}: ${cli.stderr()}`);
          url = /"url":"(http:[^"]+)"/.exec(cli.stderr())?.[1] ?? "";
          return url !== "";
        },
        { timeoutMs: 20_000, message: "the discovery API to listen" },
      );
      expect((await fetch(`${url}/.well-known/ai-catalog.json`)).status).toBe(401);
      const res = await fetch(`${url}/.well-known/ai-catalog.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const manifest = (await res.json()) as { entries: Array<{ identifier: string }> };
      expect(manifest.entries.map((e) => e.identifier)).toContain("urn:air:example.com:shared:translator");
      expect(cli.stderr()).toContain('"auth":"token"');
      expect(cli.stderr()).not.toContain(TOKEN);
    } finally {
      cli.child.kill("SIGTERM");
    }
    expect(await cli.exited).toBe(0);
  });

  it("refuses a publisher that is not a domain name with exit code 2, naming the variable", async () => {
    const cli = startCli(["--http-port", "0"], { REGISTRY_DISCOVERY_PUBLISHER: "Not A Domain" });
    expect(await cli.exited).toBe(2);
    expect(cli.stderr()).toMatch(/REGISTRY_DISCOVERY_PUBLISHER \/ --publisher/);
  });
});
