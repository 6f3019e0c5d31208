/**
 * Graceful exit for agents: on SIGTERM (Kubernetes, systemd) or Ctrl-C, stop being routed
 * (draining), leave the registry at once instead of waiting for eviction, then exit.
 */
import type { AgentHandle } from "./agent.js";

export type ShutdownOptions = {
  /** Default ["SIGTERM", "SIGINT"]. */
  signals?: NodeJS.Signals[];
  /** Time to let in-flight tasks finish while draining, before deregistering. Default 0. */
  drainMs?: number;
  /** Runs after the deregister, before exiting (drain the NATS connection here). */
  beforeExit?: (signal: NodeJS.Signals) => Promise<void> | void;
  /** Call process.exit when done. Default true. */
  exit?: boolean;
  exitCode?: number;
};

/**
 * Installs the signal handlers; returns a function that removes them. A second signal
 * during the shutdown exits at once, as an operator pressing Ctrl-C twice expects.
 */
export function installShutdownHandlers(handle: AgentHandle, options: ShutdownOptions = {}): () => void {
  const signals = options.signals ?? ["SIGTERM", "SIGINT"];
  let shuttingDown = false;

  const uninstall = () => {
    for (const s of signals) process.off(s, onSignal);
  };

  function onSignal(signal: NodeJS.Signals): void {
    if (shuttingDown) {
      process.exit(130);
    }
    shuttingDown = true;
    void (async () => {
      try {
        await handle.drain();
        if (options.drainMs) await new Promise((r) => setTimeout(r, options.drainMs));
        await handle.close();
        await options.beforeExit?.(signal);
      } finally {
        uninstall();
        // A listener on a signal replaces Node's default exit, so the exit is ours to do.
        if (options.exit !== false) process.exit(options.exitCode ?? 0);
      }
    })();
  }

  for (const s of signals) process.on(s, onSignal);
  return uninstall;
}
