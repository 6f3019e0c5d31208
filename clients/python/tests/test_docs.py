"""docs/python.md's code blocks and examples/python/ run as written, against the real registry."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from agent_registry import NotFoundError, RegistryClient

from .conftest import Stack
from .harness import REPO, deregistered_in_view, eventually

BLOCK = re.compile(r"<!-- docs-test: (\w+) -->\n```python\n(.*?)```\n(?:\n```text\n(.*?)```\n)?", re.S)


@dataclass
class Block:
    role: str
    code: str
    expected: str | None


def doc_blocks() -> list[Block]:
    text = (REPO / "docs" / "python.md").read_text()
    blocks = [Block(m[1], m[2], m[3]) for m in BLOCK.finditer(text)]
    # Every python block of the page is marked, so none escapes the test.
    assert len(blocks) == text.count("```python")
    return blocks


def env_for(stack: Stack) -> dict[str, str]:
    return {**os.environ, "NATS_URL": stack.url}


@asynccontextmanager
async def running(args: list[str], stack: Stack) -> AsyncIterator[asyncio.subprocess.Process]:
    proc = await asyncio.create_subprocess_exec(
        *args, env=env_for(stack), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def run_script(args: list[str], stack: Stack) -> str:
    async with running(args, stack) as proc:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=60)
        assert proc.returncode == 0, out.decode()
        return out.decode()


async def wait_ready(client: RegistryClient, agent_type: str) -> None:
    async def ready() -> bool:
        try:
            return (await client.get(agent_type)).agent.status == "ready"
        except NotFoundError:
            return False

    await eventually(ready, f"{agent_type} registered", timeout=30)


async def stop_and_check_gone(proc: asyncio.subprocess.Process, client: RegistryClient, agent_type: str) -> None:
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), timeout=60) == 0
    await deregistered_in_view(client, agent_type)


async def check_with_agent(
    stack: Stack, client: RegistryClient, agent: list[str], agent_type: str, body: Callable[[], Awaitable[None]]
) -> None:
    async with running(agent, stack) as proc:
        await wait_ready(client, agent_type)
        await body()
        await stop_and_check_gone(proc, client, agent_type)


async def test_the_ten_line_agent_and_coordinators_of_docs_python_md(stack: Stack, client: RegistryClient) -> None:
    blocks = doc_blocks()
    agents = [b for b in blocks if b.role == "agent"]
    others = [b for b in blocks if b.role != "agent"]
    assert len(agents) == 1
    assert len(others) == 3

    async def coordinators() -> None:
        for block in others:
            out = await run_script([sys.executable, "-c", block.code], stack)
            if block.expected is not None:
                assert out == block.expected

    await check_with_agent(stack, client, [sys.executable, "-c", agents[0].code], "greeter", coordinators)


async def test_the_python_examples(stack: Stack, client: RegistryClient) -> None:
    examples = REPO / "examples" / "python"

    async def coordinator() -> None:
        text = "Summarize this: NATS moves messages. The registry tracks agents. Coordinators call them."
        out = await run_script([sys.executable, str(examples / "llm_coordinator.py"), text], stack)
        assert "plan: text.summarize by py-summarizer" in out
        assert 'answer: {"summary": "Summarize this: NATS moves messages. The registry tracks agents."}' in out

    agent = [sys.executable, str(examples / "summarizer_agent.py")]
    await check_with_agent(stack, client, agent, "py-summarizer", coordinator)
