/**
 * Spawns and controls a real nats-server process: the product's embedded local server and
 * the test harness both use it. The server picks its own free port (`port: -1`) and tells
 * us which one through its ports file, so nothing here guesses ports or sleeps and hopes.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join, sep } from "node:path";

export interface NatsServerOptions {
  /** Path or name on PATH; natsServerBinaryName() by default. */
  binary?: string;
  host?: string;
  /** -1 (the default) lets the server pick a free port. */
  port?: number;
  jetstream?: boolean;
  /** Owned by the caller when given; otherwise a fresh temp dir removed by stop(). */
  storeDir?: string;
  /** Extra nats-server config appended verbatim (authorization, accounts, ...). */
  configText?: string;
  serverName?: string;
  clusterName?: string;
  /** -1 lets the server pick; the chosen port is then pinned for restart(). */
  clusterPort?: number;
  routes?: string[];
  debug?: boolean;
  startTimeoutMs?: number;
  stopTimeoutMs?: number;
}

export interface NatsServerHandle extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  readonly clusterPort?: number;
  readonly storeDir: string;
  /** The pid of the current process; it changes on restart(). */
  readonly pid: number;
  readonly running: boolean;
  logs(): string;
  /** SIGTERM, SIGKILL after a deadline, then removes the temp dirs it created. Final. */
  stop(): Promise<void>;
  /** SIGKILL without clean-up, for fault tests; restart() brings it back. */
  kill(): Promise<void>;
  /** Starts again on the same ports and store dir (stopping gracefully first if running). */
  restart(): Promise<void>;
}

const LOG_LINES = 200;
const POLL_MS = 20;

// Servers still running when Node exits would outlive the process that owns them.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const c of live) c.kill("SIGKILL");
    });
  }
  live.add(child);
}

export async function startNatsServer(opts: NatsServerOptions = {}): Promise<NatsServerHandle> {
  const server = new NatsServerProcess(opts);
  try {
    await server.launch();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

class NatsServerProcess implements NatsServerHandle {
  readonly storeDir: string;
  private readonly workDir = mkdtempSync(join(tmpdir(), "nats-server-"));
  private readonly host: string;
  private readonly binary: string;
  private portNumber: number;
  private clusterPortNumber: number | undefined;
  private readonly tail: string[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private exitInfo: string | undefined;
  private stopped = false;

  constructor(private readonly opts: NatsServerOptions) {
    this.binary = opts.binary ?? natsServerBinaryName();
    this.host = opts.host ?? "127.0.0.1";
    this.portNumber = opts.port ?? -1;
    this.clusterPortNumber = opts.clusterPort;
    this.storeDir = opts.storeDir ?? join(this.workDir, "store");
  }

  get port(): number {
    return this.portNumber;
  }
  get clusterPort(): number | undefined {
    return this.clusterPortNumber;
  }
  get url(): string {
    // A wildcard listen address is not dialable; clients on this host use loopback.
    const host = this.host === "0.0.0.0" || this.host === "::" ? "127.0.0.1" : this.host;
    return `nats://${host}:${this.portNumber}`;
  }
  get pid(): number {
    return this.child?.pid ?? -1;
  }
  get running(): boolean {
    return this.child !== undefined && this.exitInfo === undefined;
  }

  logs(): string {
    return this.tail.join("\n");
  }

  async launch(): Promise<void> {
    const confFile = join(this.workDir, "nats-server.conf");
    writeFileSync(confFile, this.renderConfig());
    for (const f of readdirSync(this.workDir)) if (f.endsWith(".ports")) unlinkSync(join(this.workDir, f));

    const child = spawn(this.binary, ["-c", confFile], { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    this.exitInfo = undefined;
    this.exited = new Promise((resolve) => {
      child.once("error", (err) => {
        this.exitInfo = `could not run ${this.binary}: ${err.message}`;
        live.delete(child);
        resolve();
      });
      child.once("exit", (code, signal) => {
        this.exitInfo = signal ? `killed by ${signal}` : `exit code ${code}`;
        live.delete(child);
        resolve();
      });
    });
    track(child);
    this.capture(child.stdout);
    this.capture(child.stderr);

    const ports = await this.waitForPortsFile(child);
    this.portNumber = portOf(ports.nats?.[0]);
    if (ports.cluster?.[0]) this.clusterPortNumber = portOf(ports.cluster[0]);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.terminate();
    // An owned store dir lives inside workDir; a caller's store dir is left alone.
    rmSync(this.workDir, { recursive: true, force: true });
  }

  async kill(): Promise<void> {
    if (!this.running) return;
    this.child?.kill("SIGKILL");
    await this.exited;
  }

  async restart(): Promise<void> {
    if (this.stopped) throw new Error("nats-server was stopped; start a new one instead of restart()");
    await this.terminate();
    // A killed server's sockets may linger briefly; binding early would make the new
    // process exit with "address already in use".
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 10_000);
    await waitForPortFree(this.host, this.portNumber, deadline);
    if (this.clusterPortNumber !== undefined) await waitForPortFree(this.host, this.clusterPortNumber, deadline);
    this.tail.push("--- restart ---");
    await this.launch();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private async terminate(): Promise<void> {
    if (!this.running) return;
    this.child?.kill("SIGTERM");
    const timeoutMs = this.opts.stopTimeoutMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)));
    const tooLate = await Promise.race([this.exited.then(() => false), late]);
    clearTimeout(timer);
    if (tooLate) await this.kill();
  }

  private renderConfig(): string {
    const o = this.opts;
    const q = (s: string) => JSON.stringify(s);
    const lines = [`host: ${q(this.host)}`, `port: ${this.portNumber}`, `ports_file_dir: ${q(this.workDir)}`];
    if (o.serverName) lines.push(`server_name: ${q(o.serverName)}`);
    if (o.debug) lines.push("debug: true");
    if (o.jetstream ?? true) lines.push(`jetstream { store_dir: ${q(this.storeDir)} }`);
    if (this.clusterPortNumber !== undefined || o.clusterName || o.routes?.length) {
      const cluster = [`name: ${q(o.clusterName ?? "nats")}`, `listen: ${q(`${this.host}:${this.clusterPortNumber ?? -1}`)}`];
      if (o.routes?.length) cluster.push(`routes: [${o.routes.map(q).join(", ")}]`);
      lines.push(`cluster {\n  ${cluster.join("\n  ")}\n}`);
    }
    if (o.configText) lines.push(o.configText);
    return lines.join("\n") + "\n";
  }

  // The server writes `<argv0 basename>_<pid>.ports` once it listens; it is not written
  // atomically, so a half-written file is read again on the next poll.
  private async waitForPortsFile(child: ChildProcess): Promise<PortsFile> {
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 10_000);
    const suffix = `_${child.pid}.ports`;
    for (;;) {
      if (this.exitInfo !== undefined) {
        throw new Error(`nats-server ended before it was ready (${this.exitInfo}):\n${this.logs()}`);
      }
      const name = readdirSync(this.workDir).find((f) => f.endsWith(suffix));
      if (name) {
        try {
          const ports = JSON.parse(readFileSync(join(this.workDir, name), "utf8")) as PortsFile;
          if (ports.nats?.length) return ports;
        } catch {
          // partially written; poll again
        }
      }
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`nats-server was not ready within ${this.opts.startTimeoutMs ?? 10_000} ms:\n${this.logs()}`);
      }
      await delay(POLL_MS);
    }
  }

  private capture(stream: NodeJS.ReadableStream | null): void {
    let partial = "";
    stream?.setEncoding("utf8");
    stream?.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      this.tail.push(...parts);
      if (this.tail.length > LOG_LINES) this.tail.splice(0, this.tail.length - LOG_LINES);
    });
    stream?.on("end", () => {
      if (partial) this.tail.push(partial);
      partial = "";
    });
  }
}

interface PortsFile {
  nats?: string[];
  cluster?: string[];
  monitoring?: string[];
}

function portOf(url: string | undefined): number {
  const port = Number(url ? new URL(url).port : NaN);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`nats-server ports file has no usable URL: ${url}`);
  return port;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function canBind(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

async function waitForPortFree(host: string, port: number, deadline: number): Promise<void> {
  while (!(await canBind(host, port))) {
    if (Date.now() > deadline) throw new Error(`port ${host}:${port} is still in use; cannot restart nats-server on it`);
    await delay(50);
  }
}

/**
 * The nats-server to run: NATS_SERVER_BIN (a path, or a name on PATH) when set, so that one
 * variable picks the server version for the embedded server, the tests and the benchmarks
 * alike (scripts/install-nats.sh builds a current one); otherwise `nats-server` on PATH.
 */
export function natsServerBinaryName(env: NodeJS.ProcessEnv = process.env): string {
  return env["NATS_SERVER_BIN"]?.trim() || "nats-server";
}

/** Where the nats-server binary (`name`, a path or a name on PATH) is, looked up without a shell. */
export function findNatsServerBinary(name = natsServerBinaryName()): string | null {
  const exts = process.platform === "win32" ? ["", ...(process.env.PATHEXT ?? ".EXE").split(";")] : [""];
  const candidates = name.includes(sep) || name.includes("/")
    ? [name]
    : (process.env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  for (const base of candidates) {
    for (const ext of exts) {
      const file = base + ext;
      try {
        accessSync(file, constants.X_OK);
        if (statSync(file).isFile()) return file;
      } catch {
        // not here; try the next directory
      }
    }
  }
  return null;
}

/** The bare version ("2.9.10") that `binary --version` prints, or null if it cannot run. */
export function natsServerVersion(binary = natsServerBinaryName()): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(binary, ["--version"], { timeout: 5_000 }, (err, stdout) => {
      if (err) return resolve(null);
      resolve(/v?(\d+\.\d+\.\d+[^\s]*)/.exec(stdout)?.[1] ?? null);
    });
  });
}
