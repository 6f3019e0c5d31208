"""Faults on a stack of its own: nats-server restarted on its port, the registry process stopped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import (
    Agent,
    AgentEvent,
    CapabilityCache,
    CapabilityEntry,
    RegistryClient,
    RegistryTimeoutError,
    RegistryUnreachableError,
    connect,
)

from .conftest import Stack, make_spec, unique
from .harness import deregistered_in_view, eventually


@pytest.fixture(scope="module")
def private_stack() -> Iterator[Stack]:
    s = Stack()
    yield s
    s.close()


@pytest.fixture
async def conn(private_stack: Stack) -> AsyncIterator[NatsClient]:
    nc = await connect(private_stack.url)
    yield nc
    await nc.close()


async def test_an_agent_keeps_going_across_a_nats_restart(private_stack: Stack, conn: NatsClient) -> None:
    client = RegistryClient(conn)
    agent_type = unique("reconnect")
    events: list[AgentEvent] = []
    agent = Agent(conn, make_spec(agent_type), heartbeat_interval_ms=200, on_event=events.append, handle_signals=False)

    @agent.task("text.echo")
    async def echo(payload: dict[str, str]) -> dict[str, str]:
        return payload

    async with agent:
        instance = agent.instance_id
        private_stack.nats.restart()

        async def reregistered() -> bool:
            return any(e.type == "reregistered" and e.reason == "reconnect" for e in events)

        await eventually(reregistered, "registering again after the reconnect", timeout=60)

        async def served() -> object:
            return (await client.call("text.echo", {"text": "back"}, agent_type=agent_type, timeout=2)).reply

        assert await eventually(served, "a task served after the reconnect", timeout=60) == {"text": "back"}
        assert agent.instance_id == instance
        view = (await client.get(agent_type)).agent
        assert [(i.instance_id, i.status) for i in view.instances] == [(instance, "ready")]
    await deregistered_in_view(client, agent_type)


async def test_the_cache_answers_through_a_registry_outage(private_stack: Stack, conn: NatsClient) -> None:
    client = RegistryClient(conn, timeout=1)
    agent_type = unique("cached")
    cap = f"cache.{agent_type}"
    errors: list[BaseException] = []
    async with CapabilityCache(client, resync=30, on_error=errors.append) as cache:
        assert cache.lookup(cap).value is None
        await client.register(make_spec(agent_type, capability=cap), heartbeat_interval_ms=60_000)

        # The change event refreshes the cache at once, long before the 30 s resync.
        async def seen() -> CapabilityEntry | None:
            return cache.lookup(cap).value

        entry = await eventually(seen, "the new capability in the cache")
        assert entry.providers == [agent_type]
        assert not cache.lookup(cap).stale
        private_stack.registry.stop()
        try:
            with pytest.raises((RegistryUnreachableError, RegistryTimeoutError)):
                await client.lookup(cap)
            # A change event forces a refresh, which fails: the cache keeps its answer and says it is stale.
            await conn.publish(f"registry.capability.changed.{cap}", b"{}")

            async def stale() -> bool:
                return cache.lookup(cap).stale

            await eventually(stale, "the cache marked stale")
            during = cache.lookup(cap)
            assert during.value is not None
            assert during.value.providers == [agent_type]
            assert errors
        finally:
            private_stack.registry.start()

        async def fresh() -> bool:
            return not cache.lookup(cap).stale

        await eventually(fresh, "the cache fresh again after the registry came back", timeout=60)
        assert cache.lookup(cap).value is not None
