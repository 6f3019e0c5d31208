"""Lookup latency through RegistryClient against a bare nats-py request to the same registry, in the same run,
and the CPU a heartbeating agent process spends per heartbeat.

    cd clients/python && python -m bench.lookup_bench [--requests 2000] [--beat-seconds 10] [--json PATH]

`npm run bench -- --only clients` runs it beside the Go client's benchmarks.

Starts its own nats-server (NATS_SERVER_BIN) and registry (AGENT_REGISTRY_BIN, default dist/cli/main.js),
or uses NATS_URL when set (a registry must be serving there). Prints p50/p99 of both and their ratio
(target: the client within 1.5x of the bare request). Requests are interleaved, one client then one
bare, so both see the same registry and machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from nats.aio.client import Client as NatsClient

from agent_registry import RegistryClient, connect
from tests.conftest import Stack, make_spec

CLIENT_DIR = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def lookups(nc: NatsClient, requests: int) -> tuple[list[float], list[float]]:
    client = RegistryClient(nc)
    reply = await client.register(make_spec("bench-lookup", capability="bench.lookup"), heartbeat_interval_ms=60_000)
    body = json.dumps({"capability": "bench.lookup"}).encode()
    await client.lookup("bench.lookup", min_revision=reply.revision)
    for _ in range(200):  # warm-up: connections, the registry's caches, Python's
        await client.lookup("bench.lookup")
        json.loads((await nc.request("registry.lookup", body, timeout=5)).data)
    bare: list[float] = []
    ours: list[float] = []
    for _ in range(requests):
        start = time.perf_counter()
        found = await client.lookup("bench.lookup")
        ours.append(time.perf_counter() - start)
        assert found.providers[0].agent_type == "bench-lookup"
        start = time.perf_counter()
        msg = await nc.request("registry.lookup", body, timeout=5)
        decoded = json.loads(msg.data)
        bare.append(time.perf_counter() - start)
        assert decoded["providers"][0]["agent_type"] == "bench-lookup"
    await client.deregister("bench-lookup", reply.instance_id)
    return ours, bare


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


async def heartbeat_cpu(nc: NatsClient, url: str, seconds: float) -> tuple[int, float]:
    beats = 0

    async def count(_msg: object) -> None:
        nonlocal beats
        beats += 1

    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.agent_proc", url, "bench-beat", "100", cwd=CLIENT_DIR,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        await proc.stdout.readline()  # "registered": start-up (imports, connect) is not counted
        sub = await nc.subscribe("registry.agent.heartbeat.bench-beat", cb=count)
        start_cpu, beats = cpu_seconds(proc.pid), 0
        await asyncio.sleep(seconds)
        used, counted = cpu_seconds(proc.pid) - start_cpu, beats
        await sub.unsubscribe()
    finally:
        proc.terminate()
        await proc.wait()
    return counted, used


async def main(requests: int, beat_seconds: float) -> dict[str, float | int | None]:
    stack = None if os.environ.get("NATS_URL") else Stack({"LOG_LEVEL": "error"})
    url = os.environ["NATS_URL"] if stack is None else stack.url
    try:
        nc = await connect(url)
        ours, bare = await lookups(nc, requests)
        rows = [("RegistryClient.lookup", ours), ("bare nats-py request", bare)]
        print(f"lookup, {requests} requests each, interleaved")
        for name, samples in rows:
            p50, p99 = percentile(samples, 50) * 1e6, percentile(samples, 99) * 1e6
            print(f"  {name:24s} p50 {p50:8.1f} us   p99 {p99:8.1f} us   mean {statistics.mean(samples) * 1e6:8.1f} us")
        ratio50 = percentile(ours, 50) / percentile(bare, 50)
        ratio99 = percentile(ours, 99) / percentile(bare, 99)
        print(f"  ratio client/bare: p50 {ratio50:.2f}x, p99 {ratio99:.2f}x (target <= 1.5x)")
        counted, used = await heartbeat_cpu(nc, url, beat_seconds)
        per_beat = used / counted * 1e6 if counted else float("nan")
        print(
            f"heartbeating agent (100 ms interval), {beat_seconds:g} s: {counted} heartbeats, {used * 1e3:.0f} ms CPU"
        )
        print(f"  CPU per heartbeat: {per_beat:.0f} us (everything the process did, idle loop and pings included)")
        figures: dict[str, float | int | None] = {
            "requests": requests,
            "client_p50_us": percentile(ours, 50) * 1e6,
            "client_p99_us": percentile(ours, 99) * 1e6,
            "bare_p50_us": percentile(bare, 50) * 1e6,
            "bare_p99_us": percentile(bare, 99) * 1e6,
            "heartbeats": counted,
            "heartbeat_cpu_us": per_beat if counted else None,
        }
        await nc.drain()
        return figures
    finally:
        if stack is not None:
            stack.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--beat-seconds", type=float, default=10.0)
    parser.add_argument("--json", metavar="PATH", help="also write the figures to PATH as JSON (for npm run bench)")
    args = parser.parse_args()
    measured = asyncio.run(main(args.requests, args.beat_seconds))
    if args.json is not None:
        Path(args.json).write_text(json.dumps(measured) + "\n")
