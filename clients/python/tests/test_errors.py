"""Every error code a client can provoke, from a real registry, arrives as its own exception class."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from nats.aio.client import Client as NatsClient

from agent_registry import (
    ERROR_CLASSES,
    ConflictError,
    InternalError,
    InvalidCardError,
    InvalidRequestError,
    InvalidSpecError,
    LimitExceededError,
    NoRouteError,
    NotFoundError,
    PayloadTooLargeError,
    RegistryClient,
    RegistryError,
    StaleViewError,
    UnavailableError,
    UnknownInstanceError,
    is_transient,
)
from agent_registry.errors import decode_reply

from .conftest import make_spec, unique
from .harness import REPO


def test_one_class_per_code_of_the_catalogue() -> None:
    catalogue = (REPO / "src" / "protocol" / "errors.ts").read_text()
    block = catalogue[catalogue.index("ERROR_CATALOGUE") :]
    codes = dict(re.findall(r"^\s+(\w+): \{\s*(?:\n\s*)?status: (\d+)", block, re.M))
    assert codes, "no codes read from src/protocol/errors.ts"
    assert {c: cls.default_status for c, cls in ERROR_CLASSES.items()} == {c: int(s) for c, s in codes.items()}
    documented = set(re.findall(r"^\| \d{3} \| `(\w+)` \|", Path(REPO / "docs" / "errors.md").read_text(), re.M))
    assert documented == set(ERROR_CLASSES)


def test_a_reply_naming_a_code_becomes_its_class_with_issues() -> None:
    for code, cls in ERROR_CLASSES.items():
        body = {"error": {"code": code, "message": f"m {code}", "issues": [{"path": "a.0", "message": "bad"}]}}
        headers = {"Nats-Service-Error-Code": str(cls.default_status), "Nats-Service-Error": "header text"}
        with pytest.raises(cls) as caught:
            decode_reply(headers, json.dumps(body).encode())
        assert caught.value.code == code
        assert caught.value.message == f"m {code}"
        assert caught.value.status == cls.default_status
        assert [(i.path, i.message) for i in caught.value.issues] == [("a.0", "bad")]
    # An unknown code (a newer registry) is classed by its status; a header alone still fails the reply.
    with pytest.raises(ConflictError):
        decode_reply({"Nats-Service-Error-Code": "409"}, b'{"error":{"code":"brand_new","message":"x"}}')
    with pytest.raises(InternalError) as caught_internal:
        decode_reply({"Nats-Service-Error-Code": "500", "Nats-Service-Error": "boom"}, b"")
    assert caught_internal.value.message == "boom"
    assert is_transient(caught_internal.value)
    assert not is_transient(NotFoundError("x"))


async def test_invalid_request(nc: NatsClient, client: RegistryClient) -> None:
    with pytest.raises(InvalidRequestError):
        await client.find(skill="a", tag="b")
    # Not JSON at all, straight on the wire.
    msg = await nc.request("registry.lookup", b"{not json", timeout=5)
    with pytest.raises(InvalidRequestError):
        decode_reply(msg.headers, msg.data)
    # A bad subject token is refused before anything is sent.
    with pytest.raises(InvalidRequestError):
        await client.card("Not A Type")


async def test_invalid_spec_names_the_paths(client: RegistryClient) -> None:
    spec = make_spec(unique("bad")).to_wire()
    spec["capabilities"][0]["name"] = "not a name"
    spec["max_concurrent_tasks"] = 0
    with pytest.raises(InvalidSpecError) as caught:
        await client.register(spec)
    paths = {i.path for i in caught.value.issues}
    assert "spec.capabilities.0.name" in paths or "capabilities.0.name" in paths
    assert any(p.endswith("max_concurrent_tasks") for p in paths)


async def test_invalid_card(client: RegistryClient) -> None:
    with pytest.raises(InvalidCardError) as caught:
        await client.register(agent_type=unique("card"), a2a_card={"name": "x", "description": "y", "version": "1.0.0"})
    assert caught.value.status == 400


async def test_not_found(client: RegistryClient) -> None:
    with pytest.raises(NotFoundError):
        await client.get(unique("nobody"))
    with pytest.raises(NotFoundError):
        await client.schema("NoSuchSchema", "9.9.9")


async def test_unknown_instance(client: RegistryClient) -> None:
    agent_type = unique("ghost")
    await client.register(make_spec(agent_type))
    with pytest.raises(UnknownInstanceError):
        await client.heartbeat(agent_type, "never-registered")
    with pytest.raises(UnknownInstanceError):
        await client.deregister(agent_type, "never-registered")


async def test_no_route(client: RegistryClient) -> None:
    with pytest.raises(NoRouteError):
        await client.route(skill=f"no.{unique('skill')}")


async def test_conflict_on_a_changed_spec_under_the_same_version(client: RegistryClient) -> None:
    agent_type = unique("conflict")
    await client.register(make_spec(agent_type))
    with pytest.raises(ConflictError) as caught:
        await client.register(make_spec(agent_type, description="another description"))
    assert "description" in caught.value.message
    replaced = await client.register(make_spec(agent_type, description="another description"), replace=True)
    assert replaced.agent_type == agent_type


async def test_payload_too_large(client: RegistryClient) -> None:
    with pytest.raises(PayloadTooLargeError):
        await client.search("x" * (300 * 1024))


async def test_limit_exceeded_for_oversized_metadata(client: RegistryClient) -> None:
    with pytest.raises(LimitExceededError):
        await client.register(make_spec(unique("meta")), metadata={f"k{i}": "x" * 4000 for i in range(5)})


async def test_unavailable_past_the_types_write_budget(client: RegistryClient) -> None:
    # The session's registry allows 20 writes a second per agent type, in bursts of 40.
    agent_type = unique("flood")
    reply = await client.register(make_spec(agent_type))
    results = await asyncio.gather(
        *(client.heartbeat(agent_type, reply.instance_id) for _ in range(400)), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, RegistryError)]
    assert refused
    assert all(isinstance(r, UnavailableError) and r.status == 503 for r in refused)
    assert is_transient(refused[0])


async def test_stale_view_when_min_revision_is_never_reached(client: RegistryClient) -> None:
    with pytest.raises(StaleViewError) as caught:
        await client.lookup("any.thing", min_revision=10**12)
    assert caught.value.status == 503
    assert is_transient(caught.value)
