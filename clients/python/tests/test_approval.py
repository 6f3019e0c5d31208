"""The approval gate's operator ops (protocol v1.2, docs/trust.md) on a real registry whose trust file
sets tenant acme's approval to manual: a new acme spec waits, listed by ``pending``, routed by no
query of acme's until ``approve``; ``reject`` keeps it out with a reason; refusals raise the typed
errors; the decisions are stored events whose data reads as ``ApprovalData``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import (
    APPROVAL_EVENTS,
    ApprovalData,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    RegisterReply,
    RegistryClient,
    connect,
    watch,
)

from .conftest import Stack, make_spec, unique

TENANT = "acme"


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A registry of its own: acme under approval manual, shared agents under auto (the default)."""
    trust: Path = tmp_path_factory.mktemp("trust") / "trust.json"
    trust.write_text(json.dumps({"tenants": {TENANT: {"approval": "manual"}}}))
    s = Stack({"REGISTRY_TRUST_FILE": str(trust)})
    yield s
    s.close()


@pytest.fixture(scope="module")
async def gated_nc(gated: Stack) -> AsyncIterator[NatsClient]:
    conn = await connect(gated.url)
    yield conn
    await conn.drain()


@pytest.fixture(scope="module")
def operator(gated_nc: NatsClient) -> RegistryClient:
    return RegistryClient(gated_nc)


@pytest.fixture(scope="module")
def acme(gated_nc: NatsClient) -> RegistryClient:
    return RegistryClient(gated_nc, tenant=TENANT)


async def register_acme(acme: RegistryClient, agent_type: str, **fields: str) -> RegisterReply:
    spec = make_spec(agent_type, f"{agent_type}.run", **fields)
    return await acme.register(spec, instance_id="i-1", status="ready", heartbeat_interval_ms=60_000)


async def providers(client: RegistryClient, agent_type: str, min_revision: int) -> list[str]:
    reply = await client.lookup(f"{agent_type}.run", min_revision=min_revision)
    return [p.agent_type for p in reply.providers]


async def test_a_new_spec_waits_is_listed_and_approve_makes_it_routable(
    operator: RegistryClient, acme: RegistryClient
) -> None:
    agent_type = unique("acme-invoices")
    registered = await register_acme(acme, agent_type)
    assert registered.approval is not None
    assert registered.approval.state == "pending"
    assert any("approval" in w for w in registered.warnings)

    view = (await acme.get(agent_type, min_revision=registered.revision)).agent
    assert view.approval is not None
    assert view.approval.state == "pending"
    assert not view.routable
    assert await providers(acme, agent_type, registered.revision) == []

    page = await operator.pending(tenant=TENANT, min_revision=registered.revision)
    waiting = {a.agent_type: a for a in page.agents}
    assert agent_type in waiting
    assert waiting[agent_type].tenant_scope == TENANT
    assert [a.agent_type async for a in operator.pending_all(limit=1, min_revision=registered.revision)].count(
        agent_type
    ) == 1
    shared = await operator.pending(shared_only=True, min_revision=registered.revision)
    assert agent_type not in [a.agent_type for a in shared.agents]

    approved = await operator.approve(
        agent_type, by="alice", version="1.0.0", revision=waiting[agent_type].revision, reason="reviewed"
    )
    assert approved.agent_type == agent_type
    assert approved.tenant_scope == TENANT
    assert approved.approval.state == "approved"
    assert approved.approval.by == "alice"
    assert approved.approval.reason == "reviewed"
    assert approved.approval.at is not None
    assert await providers(acme, agent_type, approved.revision) == [agent_type]
    assert (await acme.get(agent_type, min_revision=approved.revision)).agent.routable
    after = await operator.pending(tenant=TENANT, min_revision=approved.revision)
    assert agent_type not in [a.agent_type for a in after.agents]

    with pytest.raises(ConflictError):
        await operator.approve(agent_type, by="alice")  # approving it again changes nothing


async def test_reject_keeps_a_spec_out_with_its_reason(operator: RegistryClient, acme: RegistryClient) -> None:
    agent_type = unique("acme-payroll")
    registered = await register_acme(acme, agent_type)
    rejected = await operator.reject(agent_type, by="bob", reason="no ledger check", version="1.0.0")
    assert rejected.approval.state == "rejected"
    assert rejected.approval.by == "bob"
    assert rejected.approval.reason == "no ledger check"
    assert rejected.revision > registered.revision
    assert await providers(acme, agent_type, rejected.revision) == []

    page = await operator.pending(tenant=TENANT, state="rejected", min_revision=rejected.revision)
    listed = [a for a in page.agents if a.agent_type == agent_type]
    assert len(listed) == 1
    assert listed[0].approval is not None
    assert listed[0].approval.reason == "no ledger check"
    waiting = await operator.pending(tenant=TENANT, min_revision=rejected.revision)
    assert agent_type not in [a.agent_type for a in waiting.agents]

    # Approving a rejected spec is allowed: it becomes routable.
    approved = await operator.approve(agent_type, by="alice", revision=rejected.revision)
    assert approved.approval.state == "approved"
    assert await providers(acme, agent_type, approved.revision) == [agent_type]


async def test_refusals_are_typed_errors(operator: RegistryClient, acme: RegistryClient) -> None:
    with pytest.raises(NotFoundError):
        await operator.approve(unique("acme-nobody"), by="alice")
    with pytest.raises(NotFoundError):
        await operator.reject(unique("acme-nobody"), by="alice", reason="unknown")

    agent_type = unique("acme-ledger")
    registered = await register_acme(acme, agent_type)
    with pytest.raises(ConflictError) as other_version:
        await operator.approve(agent_type, by="alice", version="9.9.9")
    assert other_version.value.status == 409
    with pytest.raises(ConflictError):
        await operator.approve(agent_type, by="alice", revision=registered.revision + 1000)
    with pytest.raises(InvalidRequestError) as no_reason:
        await operator.reject(agent_type, by="alice", reason="")
    assert no_reason.value.status == 400
    with pytest.raises(InvalidRequestError):
        await operator.approve("not a type", by="alice")  # refused here: it would build another subject
    with pytest.raises(InvalidRequestError):
        await operator.pending(tenant=TENANT, shared_only=True)
    # None of the refusals decided anything: the spec still waits.
    view = (await acme.get(agent_type, min_revision=registered.revision)).agent
    assert view.approval is not None
    assert view.approval.state == "pending"

    # A shared agent is under auto, approved by policy: a decision on it changes nothing.
    shared_type = unique("shared-search")
    shared = await operator.register(make_spec(shared_type), instance_id="i-1", heartbeat_interval_ms=60_000)
    assert shared.approval is None
    with pytest.raises(ConflictError):
        await operator.approve(shared_type, by="alice")


async def test_decisions_are_events_with_approval_data(
    operator: RegistryClient, acme: RegistryClient, gated_nc: NatsClient
) -> None:
    agent_type = unique("acme-audit")
    await register_acme(acme, agent_type)
    await operator.reject(agent_type, by="bob", reason="first look")
    await operator.approve(agent_type, by="alice")

    seen: list[ApprovalData] = []
    async with asyncio.timeout(30):  # a bound on a wait for events, not a timing assertion
        async for watched in watch(gated_nc, since=1, types=APPROVAL_EVENTS, agent_type=agent_type):
            seen.append(ApprovalData.model_validate(watched.event.data))
            assert watched.event.type == f"registry.agent.{seen[-1].state}"
            if len(seen) == 3:
                break
    assert [(d.state, d.by, d.reason) for d in seen] == [
        ("pending", None, None),
        ("rejected", "bob", "first look"),
        ("approved", "alice", None),
    ]
    assert all(d.agent_type == agent_type and d.tenant_scope == TENANT for d in seen)
