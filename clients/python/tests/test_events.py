"""watch(): replay from a sequence or a time, filters, and no consumer left behind; the cache's live refresh."""

from __future__ import annotations

import datetime

from nats.aio.client import Client as NatsClient

from agent_registry import CapabilityCache, CapabilityEntry, RegistryClient, WatchedEvent, watch
from agent_registry.events import subject_matches

from .conftest import make_spec, unique
from .harness import eventually

STREAM = "REGISTRY_EVENTS"


async def consumers(nc: NatsClient) -> set[str]:
    return {c.name for c in await nc.jetstream().consumers_info(STREAM)}


async def first_events(nc: NatsClient, count: int, **options: object) -> list[WatchedEvent]:
    seen: list[WatchedEvent] = []
    async for event in watch(nc, **options):  # type: ignore[arg-type]
        seen.append(event)
        if len(seen) == count:
            break
    return seen


async def test_replay_from_a_time_then_from_a_sequence(nc: NatsClient, client: RegistryClient) -> None:
    start = datetime.datetime.now(datetime.UTC)
    agent_type = unique("watched")
    reply = await client.register(make_spec(agent_type, capability=f"w.{agent_type}"))
    await client.deregister(agent_type, reply.instance_id)
    events = await first_events(nc, 2, since=start, agent_type=agent_type)
    assert [e.event.type for e in events] == ["registry.agent.registered", "registry.agent.deregistered"]
    assert events[0].event.data["instance_id"] == reply.instance_id
    assert events[1].event.data["reason"] == "graceful"
    assert events[0].seq < events[1].seq
    # Resuming after the first event's sequence gives the second one again.
    again = await first_events(nc, 1, since=events[0].seq + 1, agent_type=agent_type)
    assert again[0].seq == events[1].seq
    changed = await first_events(nc, 1, since=start, types=["capability.changed"])
    assert changed[0].event.type == "registry.capability.changed"


async def test_several_types_are_filtered_here_and_the_consumer_goes_with_the_loop(
    nc: NatsClient, client: RegistryClient
) -> None:
    start = datetime.datetime.now(datetime.UTC)
    agent_type = unique("filtered")
    reply = await client.register(make_spec(agent_type, capability=f"f.{agent_type}"))
    await client.deregister(agent_type, reply.instance_id)
    before = await consumers(nc)
    during: set[str] = set()
    seen = []
    types = ["registry.agent.deregistered", "agent.registered"]
    async for event in watch(nc, since=start, types=types, agent_type=agent_type):
        during = await consumers(nc)
        seen.append(event.event.type)
        if len(seen) == 2:
            break
    assert seen == ["registry.agent.registered", "registry.agent.deregistered"]
    ours = during - before
    assert len(ours) == 1

    async def gone() -> bool:
        return not (ours & await consumers(nc))

    await eventually(gone, "the watch's consumer deleted")


def test_subject_matching() -> None:
    assert subject_matches("registry.agent.*.x", "registry.agent.registered.x")
    assert subject_matches("registry.>", "registry.capability.changed.a.b")
    assert not subject_matches("registry.agent.*.x", "registry.agent.registered.y")
    assert not subject_matches("registry.>", "registry")


async def test_the_cache_follows_capability_events(client: RegistryClient) -> None:
    agent_type = unique("follow")
    cap = f"follow.{agent_type}"
    async with CapabilityCache(client, resync=3600) as cache:
        refreshes = cache.refreshes
        reply = await client.register(make_spec(agent_type, capability=cap))

        async def added() -> CapabilityEntry | None:
            return cache.lookup(cap).value

        assert (await eventually(added, "the capability added")).providers == [agent_type]
        assert cache.refreshes > refreshes
        assert cache.revision >= reply.revision
        assert cap in {e.name for e in cache.snapshot().value}
        await client.deregister(agent_type, reply.instance_id)

        async def removed() -> bool:
            return cache.lookup(cap).value is None

        await eventually(removed, "the capability removed")
