/**
 * What a process costs, read from /proc (Linux): CPU seconds from /proc/<pid>/stat and
 * resident memory from /proc/<pid>/status. Reading from outside keeps the measured process
 * free of any measuring code; the registry's own process_cpu_seconds_total would say the same.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; the fields after its closing paren are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/** Resident set size in bytes. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/** CPU use of a process over a stretch of time, as a share of one core (1 = one core busy). */
export class CpuMeter {
  private startCpu: number;
  private startWall: number;

  constructor(private readonly pid: number) {
    this.startCpu = cpuSeconds(pid);
    this.startWall = performance.now();
  }

  read(): { cores: number; cpuSeconds: number; seconds: number } {
    const cpu = cpuSeconds(this.pid) - this.startCpu;
    const seconds = (performance.now() - this.startWall) / 1000;
    return { cores: cpu / seconds, cpuSeconds: cpu, seconds };
  }
}

/** Samples RSS on an interval and keeps the peak. */
export class RssSampler {
  peak = 0;
  last = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(pid: number, intervalMs = 500) {
    const sample = (): void => {
      try {
        this.last = rssBytes(pid);
        if (this.last > this.peak) this.peak = this.last;
      } catch {
        // the process ended; keep what was seen
      }
    };
    sample();
    this.timer = setInterval(sample, intervalMs);
  }

  stop(): { peak: number; last: number } {
    clearInterval(this.timer);
    return { peak: this.peak, last: this.last };
  }
}

export type Machine = { cores: number; memoryGb: number; cpuModel: string; platform: string; kernel: string };

export function machine(): Machine {
  const list = cpus();
  let kernel = "";
  try {
    kernel = readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
  } catch {
    // not Linux
  }
  return {
    cores: list.length,
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    platform: `${process.platform}-${process.arch}`,
    kernel,
  };
}

export const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
