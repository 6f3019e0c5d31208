"""Deprecation (protocol v1.2, docs/trust.md "Deprecation") on the session's real registry: a
deprecated agent type stays routable and every answer that shows it carries ``deprecated``; a tie
goes to the successor; ``undeprecate`` withdraws it; refusals raise the typed errors and change
nothing; both decisions are stored events whose data reads as ``DeprecationData``."""

from __future__ import annotations

import asyncio

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import (
    DEPRECATION_EVENTS,
    ConflictError,
    DeprecationData,
    InvalidRequestError,
    NotFoundError,
    RegistryClient,
    watch,
)

from .conftest import make_spec, unique


async def test_a_deprecated_type_stays_routable_marked_everywhere_and_loses_ties(client: RegistryClient) -> None:
    old, new = unique("py-old-sum"), unique("py-new-sum")
    skill = unique("py.summarize")
    await client.register(make_spec(old, skill), instance_id="i-1", status="ready", heartbeat_interval_ms=60_000)
    last = await client.register(make_spec(new, skill), instance_id="j-1", status="ready", heartbeat_interval_ms=60_000)
    assert (await client.route(skill=skill, min_revision=last.revision)).agent_type == old

    reply = await client.deprecate(old, by="alice", reason=f"use {new}", successor=new, version="1.0.0")
    assert reply.agent_type == old
    assert reply.deprecated is not None
    assert (reply.deprecated.by, reply.deprecated.reason, reply.deprecated.successor) == ("alice", f"use {new}", new)

    rev = reply.revision
    lookup = await client.lookup(skill, min_revision=rev)
    assert [(p.agent_type, p.deprecated is not None) for p in lookup.providers] == [(new, False), (old, True)]
    route = await client.route(skill=skill, min_revision=rev)
    assert route.agent_type == new
    assert route.deprecated is None
    assert [(c.agent_type, c.deprecated is not None) for c in route.candidates] == [(new, False), (old, True)]
    view = (await client.get(old, min_revision=rev)).agent
    assert view.deprecated is not None
    assert view.deprecated.successor == new
    assert view.routable  # a warning, not a removal
    discovered = {a.id: a for a in (await client.discover(capability=skill, min_revision=rev)).agents}
    assert discovered[old].deprecated is not None
    assert discovered[new].deprecated is None

    undone = await client.undeprecate(old, by="bob", reason="kept")
    assert undone.deprecated is None
    assert (await client.get(old, min_revision=undone.revision)).agent.deprecated is None


async def test_refusals_raise_the_typed_errors(client: RegistryClient) -> None:
    agent_type = unique("py-dep")
    await client.register(make_spec(agent_type, unique("py.run")), instance_id="i-1", heartbeat_interval_ms=60_000)
    with pytest.raises(ConflictError):
        await client.undeprecate(agent_type, by="alice")  # not deprecated
    with pytest.raises(ConflictError):
        await client.deprecate(agent_type, by="alice", version="9.9.9")  # not the version reviewed
    with pytest.raises(InvalidRequestError):
        await client.deprecate(agent_type, by="alice", successor=agent_type)
    with pytest.raises(InvalidRequestError):
        await client.deprecate(agent_type, by="alice", successor="Not A Type")  # refused before sending
    with pytest.raises(NotFoundError):
        await client.deprecate(unique("py-nobody"), by="alice")
    assert (await client.get(agent_type)).agent.deprecated is None


async def test_both_decisions_are_stored_events(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("py-dep-ev")
    await client.register(make_spec(agent_type, unique("py.run")), instance_id="i-1", heartbeat_interval_ms=60_000)
    await client.deprecate(agent_type, by="alice", reason="old")
    await client.undeprecate(agent_type, by="bob")
    seen: list[DeprecationData] = []

    async def collect() -> None:
        async for w in watch(nc, since=1, types=DEPRECATION_EVENTS, agent_type=agent_type):
            seen.append(DeprecationData.model_validate(w.event.data))
            if len(seen) == 2:
                return

    await asyncio.wait_for(collect(), timeout=15)
    assert [(d.deprecated, d.by, d.reason) for d in seen] == [(True, "alice", "old"), (False, "bob", None)]
