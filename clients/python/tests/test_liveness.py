"""An agent process under signals: SIGTERM deregisters it; a frozen one is evicted and registers again."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import RegistryClient, WatchedEvent, watch

from .conftest import Stack, unique
from .harness import deregistered_in_view, eventually

CLIENT_DIR = Path(__file__).resolve().parents[1]


class AgentProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[dict[str, object]] = []

    async def next_event(self, kind: str) -> dict[str, object]:
        async def read() -> dict[str, object] | None:
            for line in self.lines:
                if line["type"] == kind:
                    self.lines.remove(line)
                    return line
            assert self.proc.stdout is not None
            raw = await asyncio.wait_for(self.proc.stdout.readline(), timeout=1)
            if raw:
                self.lines.append(json.loads(raw))
            return None

        return await eventually(read, f"the agent's {kind} event", timeout=30)


@pytest.fixture
async def agent_process(stack: Stack) -> AsyncIterator[tuple[AgentProcess, str]]:
    agent_type = unique("proc")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.agent_proc", stack.url, agent_type, "100",
        cwd=CLIENT_DIR, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        yield AgentProcess(proc), agent_type
    finally:
        if proc.returncode is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            await proc.wait()


async def test_sigterm_drains_and_deregisters(agent_process: tuple[AgentProcess, str], client: RegistryClient) -> None:
    agent, agent_type = agent_process
    registered = await agent.next_event("registered")
    # Read your writes: call() sends no min_revision.
    revision = registered["revision"]
    assert isinstance(revision, int)
    await client.get(agent_type, min_revision=revision)
    assert (await client.call("text.echo", {"text": "up"}, agent_type=agent_type)).reply == {"text": "up"}
    agent.proc.send_signal(signal.SIGTERM)
    assert (await agent.next_event("deregistered"))["type"] == "deregistered"
    await agent.next_event("exited")
    assert await agent.proc.wait() == 0
    await deregistered_in_view(client, agent_type)
    assert (await client.get(agent_type)).agent.instance_count == 0
    assert registered["instance_id"]


async def test_a_frozen_agent_is_evicted_and_registers_again(
    agent_process: tuple[AgentProcess, str], nc: NatsClient, client: RegistryClient
) -> None:
    agent, agent_type = agent_process
    first = await agent.next_event("registered")
    # Replayed from a time before the freeze, the eviction cannot slip past the watch.
    events = watch(nc, since=datetime.datetime.now(datetime.UTC), types=["agent.deregistered"], agent_type=agent_type)

    async def next_deregistered() -> WatchedEvent:
        return await anext(events)

    evicted = asyncio.create_task(next_deregistered())
    # SIGSTOP freezes the whole process: no heartbeat for 3 intervals (300 ms) means eviction.
    os.kill(agent.proc.pid, signal.SIGSTOP)
    try:
        event = (await asyncio.wait_for(evicted, timeout=30)).event
    finally:
        os.kill(agent.proc.pid, signal.SIGCONT)
        await events.aclose()
    assert event.data["reason"] == "evicted"
    assert event.data["instance_id"] == first["instance_id"]
    again = await agent.next_event("reregistered")
    assert again["reason"] == "unknown_instance"
    assert again["instance_id"] == first["instance_id"]

    async def ready_again() -> bool:
        return (await client.get(agent_type)).agent.status == "ready"

    await eventually(ready_again, "the agent ready after registering again")
