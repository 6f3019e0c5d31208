from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import AgentSpec, Capability, RegistryClient, connect

from .harness import NatsServer, Registry

# The session's registry: short heartbeats allowed, a per-type write budget small enough to provoke
# 503 unavailable on purpose (no test's agent comes near it otherwise).
SESSION_ENV = {"REGISTRY_TYPE_RATE_LIMIT": "20"}


class Stack:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.nats = NatsServer()
        self.nats.start()
        self.registry = Registry(self.nats.url, env)
        try:
            self.registry.start()
        except BaseException:
            self.nats.close()
            raise

    @property
    def url(self) -> str:
        return self.nats.url

    def close(self) -> None:
        try:
            self.registry.stop()
        finally:
            self.nats.close()


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    s = Stack(SESSION_ENV)
    yield s
    s.close()


@pytest.fixture(scope="session")
async def nc(stack: Stack) -> AsyncIterator[NatsClient]:
    conn = await connect(stack.url)
    yield conn
    await conn.drain()


@pytest.fixture(scope="session")
async def client(nc: NatsClient) -> RegistryClient:
    return RegistryClient(nc)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def make_spec(agent_type: str, capability: str = "text.echo", **fields: Any) -> AgentSpec:
    """A small valid spec whose capability takes ``{"text": string}`` and answers ``{"text": string}``."""
    text_object = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    caps = fields.pop("capabilities", None) or [
        Capability(
            name=capability,
            description=f"Echoes the text back ({agent_type})",
            input_schema=text_object,
            output_schema=text_object,
            tags=["echo", "test"],
            examples=["say it again"],
        )
    ]
    base: dict[str, Any] = {
        "agent_type": agent_type,
        "version": "1.0.0",
        "description": f"Test agent {agent_type}",
        "owner_team": "python-tests",
        "capabilities": caps,
        "nats_subject": f"agents.{agent_type}.tasks",
        "consumer_group": agent_type,
    }
    base.update(fields)
    return AgentSpec(**base)
