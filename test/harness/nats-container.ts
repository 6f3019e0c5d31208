/**
 * The Docker-only fallback: the official NATS image with JetStream, started through
 * testcontainers. nats.ts loads this file only when it picks the container backend, so runs
 * with a nats-server binary never load testcontainers (nor its Docker client).
 */
import { GenericContainer, Wait, type StartedTestContainer } from "testcontainers";
import { CONTAINER_IMAGE } from "./nats-backend.js";
import type { NatsTestServer } from "./nats.js";

const LOG_LINES = 200;

export async function startNatsContainer(opts: { jetstream?: boolean } = {}): Promise<NatsTestServer> {
  let started: StartedTestContainer;
  try {
    started = await new GenericContainer(CONTAINER_IMAGE)
      .withCommand(opts.jetstream === false ? [] : ["-js"])
      .withExposedPorts(4222)
      .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
      .start();
  } catch (err) {
    throw new Error(
      `Could not start the ${CONTAINER_IMAGE} container (is the Docker engine running?). ` +
        "Install nats-server, or set NATS_URL to an existing server.",
      { cause: err },
    );
  }
  const tail: string[] = [];
  (await started.logs()).on("data", (chunk: Buffer | string) => {
    tail.push(...String(chunk).split("\n").filter(Boolean));
    if (tail.length > LOG_LINES) tail.splice(0, tail.length - LOG_LINES);
  });
  const port = started.getMappedPort(4222);
  const unsupported = (what: string) => () =>
    Promise.reject(new Error(`${what}() is not supported with the container fallback; install nats-server`));
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await started.stop();
  };
  return {
    url: `nats://${started.getHost()}:${port}`,
    port,
    canRestart: false,
    logs: () => tail.join("\n"),
    stop,
    // A restarted container may get another host port, so clients could not reconnect.
    kill: unsupported("kill"),
    restart: unsupported("restart"),
    [Symbol.asyncDispose]: stop,
  };
}
