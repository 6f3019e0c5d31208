"""Real processes for the tests: a nats-server with JetStream and the registry (`node dist/cli/main.js serve`),
each on free ports, each stopped at the end (and at interpreter exit, whatever failed half-way)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from agent_registry import Agent, RegistryClient

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[3]
_RUNNING: set[subprocess.Popen[bytes]] = set()


def _kill_leftovers() -> None:
    for proc in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


atexit.register(_kill_leftovers)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(0.05)


async def in_view(client: RegistryClient, agent: Agent) -> None:
    """Returns once the registry's view holds the agent's registration.

    ``call()`` and the queries a test makes next send no ``min_revision``: a view a moment behind
    the register reply would answer no_route or not_found.
    """
    await client.get(agent.agent_type, min_revision=agent.registration.revision)


async def deregistered_in_view(client: RegistryClient, agent_type: str) -> None:
    """Waits for the view to show ``agent_type`` deregistered (the deregister reply's revision is not at hand)."""

    async def gone() -> bool:
        return (await client.get(agent_type)).agent.status == "deregistered"

    await eventually(gone, f"{agent_type} deregistered in the registry's view")


async def eventually(check: Callable[[], Awaitable[T | None]], what: str, timeout: float = 20.0) -> T:
    """Polls ``check`` until it returns something other than None/False; a deadline, never a fixed sleep."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = await check()
            if value is not None and value is not False:
                return value
        except Exception as e:
            last = e
        await asyncio.sleep(0.05)
    raise TimeoutError(f"gave up waiting for {what} after {timeout:g} s (last error: {last!r})")


def _spawn(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    out.close()
    _RUNNING.add(proc)
    return proc


def _stop(proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        _RUNNING.discard(proc) if proc is not None else None
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    _RUNNING.discard(proc)


def _listening_port(ports_dir: Path, pid: int) -> int | None:
    """The client port a nats-server wrote to its ports file (``<name>_<pid>.ports``), once it is complete."""
    for f in ports_dir.glob(f"*_{pid}.ports"):
        try:
            url = json.loads(f.read_text())["nats"][0]
            return int(url.rsplit(":", 1)[1])
        except (OSError, ValueError, KeyError, IndexError):
            return None
    return None


class NatsServer:
    """nats-server with JetStream in a temp store; ``restart()`` keeps its port and store."""

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or os.environ.get("NATS_SERVER_BIN") or shutil.which("nats-server") or "nats-server"
        self.dir = Path(tempfile.mkdtemp(prefix="ar-py-nats-"))
        # Chosen by nats-server itself on the first start, then kept for restarts: a port asked of
        # the kernel here and bound by nats-server later could be taken by another process meanwhile.
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        ports = self.dir / "ports"
        ports.mkdir(exist_ok=True)
        port = str(self.port) if self.port else "-1"
        args = [
            self.binary,
            "-js",
            "-sd",
            str(self.dir / "js"),
            "-a",
            "127.0.0.1",
            "-p",
            port,
            "--ports_file_dir",
            str(ports),
        ]
        self.proc = _spawn(args, self.dir / "nats.log")

        def up() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited: {(self.dir / 'nats.log').read_text()[-2000:]}")
            if not self.port:
                self.port = _listening_port(ports, self.proc.pid) or 0
                if not self.port:
                    return False
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0

        wait_until(up, "nats-server listening")

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def registry_main() -> str:
    return os.environ.get("AGENT_REGISTRY_BIN") or str(REPO / "dist" / "cli" / "main.js")


class Registry:
    """The registry service as its own process, with short heartbeat bounds for liveness tests."""

    def __init__(self, nats_url: str, env: dict[str, str] | None = None) -> None:
        self.nats_url = nats_url
        self.extra = env or {}
        self.http_port = free_port()
        self.log = Path(tempfile.mkdtemp(prefix="ar-py-registry-")) / "registry.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "NATS_URL": self.nats_url,
            "REGISTRY_EMBEDDED": "never",
            "REGISTRY_HTTP_PORT": str(self.http_port),
            "REGISTRY_HTTP_HOST": "127.0.0.1",
            "REGISTRY_MIN_HEARTBEAT_INTERVAL_MS": "100",
            "REGISTRY_EVICTION_TICK_MS": "50",
            "REGISTRY_LEASE_MS": "1000",
            "LOG_LEVEL": "warn",
            **self.extra,
        }
        self.proc = _spawn(["node", registry_main(), "serve"], self.log, env)

        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"registry exited: {self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/readyz", timeout=1) as r:
                    return bool(r.status == 200)
            except OSError:
                return False

        wait_until(ready, "registry ready", timeout=60)

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None
