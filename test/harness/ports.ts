/**
 * A port that was free a moment ago, for listeners that cannot bind port 0 themselves (an
 * HTTP port handed to a child process, a cluster route every node must know up front).
 * Prefer port 0 (or nats-server's -1) wherever the listener reports its port. Test and
 * benchmark code only: the service itself never guesses ports.
 */
import { createServer } from "node:net";

export function pickFreePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ host, port: 0, exclusive: true }, () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** `count` different free ports (two probes in a row may be handed the same one). */
export async function distinctFreePorts(count: number, host = "127.0.0.1"): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await pickFreePort(host));
  return [...ports];
}
