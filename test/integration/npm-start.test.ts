/**
 * `npm start`, the README's first command, as a process manager or a person runs and stops it:
 * SIGTERM sent to npm's own pid must stop the service, with its embedded nats-server. npm
 * forwards the signal to its script's process; the script is `exec node ...`, so that process
 * is the service itself and not a shell that would die and leave it running.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ROOT } from "../harness/cli.js";
import { pickFreePort } from "../harness/ports.js";
import { waitFor } from "../harness/wait.js";

const dataDir = mkdtempSync(join(tmpdir(), "npm-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Whether something accepts TCP connections on the port. */
const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

it("stops the service and its embedded nats-server on a SIGTERM to npm", { timeout: 180_000 }, async () => {
  const [natsPort, httpPort] = [await pickFreePort(), await pickFreePort()];
  const env = {
    ...process.env,
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    REGISTRY_EMBEDDED: "always",
    REGISTRY_DATA_DIR: dataDir,
    REGISTRY_HTTP_PORT: String(httpPort),
    REGISTRY_PREFIX: "npmstart.registry",
  };
  // `npm start` builds first (prestart), incrementally.
  const npm = spawn("npm", ["start"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  npm.stdout.on("data", (b: Buffer) => (output += b.toString()));
  npm.stderr.on("data", (b: Buffer) => (output += b.toString()));
  const npmExited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  try {
    await waitFor(() => output.includes('"msg":"agent registry running"'), { timeoutMs: 150_000, message: `npm start running:\n${output.slice(-2000)}` });
    expect(await listening(httpPort)).toBe(true);
    expect(await listening(natsPort)).toBe(true);

    npm.kill("SIGTERM");
    await npmExited;
    // The service drained and stopped, and took its nats-server with it.
    await waitFor(() => output.includes('"msg":"stopped"'), { timeoutMs: 20_000, message: `the service stopped:\n${output.slice(-2000)}` });
    await waitFor(async () => !(await listening(httpPort)) && !(await listening(natsPort)), { timeoutMs: 20_000, message: "ops and NATS ports closed" });
  } finally {
    if (npm.exitCode === null) npm.kill("SIGKILL");
  }
});
