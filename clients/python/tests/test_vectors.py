"""Every vector of protocol/vectors against this client's models and against a real registry.

specs.json runs both ways: a spec the models accept the registry accepts, one they refuse it refuses,
with the same code and the same issue paths. cards.json, toolspecs.json and servers.json run through the
registry (the client sends them as they are), and the spec each import yields must be one the models
accept.
requests.json runs on a registry of its own (its vectors read the whole fleet), and each reply must
also parse as the client's reply model of its op.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from pydantic import BaseModel

from agent_registry import AgentSpec, InvalidSpecError, RegistryClient, connect, validate_spec
from agent_registry.deprecation import DeprecationReply
from agent_registry.errors import RegistryError, error_from_reply
from agent_registry.ids import AGENT_TYPE_RE, TENANT_RE
from agent_registry.replies import (
    ApprovalReply,
    CapabilitiesReply,
    CardReply,
    CheckReply,
    DeregisterReply,
    DiscoverReply,
    FindReply,
    GetReply,
    GraphReply,
    HeartbeatReply,
    ListReply,
    LookupReply,
    PendingReply,
    RegisterReply,
    RouteReply,
    SchemaPutReply,
    SchemaReply,
    SchemasReply,
    SearchReply,
    ToolspecReply,
)

from .conftest import Stack
from .vectors import load, mismatch, vectors, warning_paths

REPLY_MODELS: dict[str, type[BaseModel]] = {
    "lookup": LookupReply,
    "get": GetReply,
    "list": ListReply,
    "capabilities": CapabilitiesReply,
    "route": RouteReply,
    "find": FindReply,
    "search": SearchReply,
    "discover": DiscoverReply,
    "card": CardReply,
    "toolspec": ToolspecReply,
    "check": CheckReply,
    "graph": GraphReply,
    "schemas": SchemasReply,
    "schema": SchemaReply,
    "register": RegisterReply,
    "heartbeat": HeartbeatReply,
    "deregister": DeregisterReply,
    "schema.put": SchemaPutReply,
    "approval.pending": PendingReply,
    "approval.approve": ApprovalReply,
    "approval.reject": ApprovalReply,
    "approval.deprecate": DeprecationReply,
    "approval.undeprecate": DeprecationReply,
}


async def send(nc: NatsClient, subject: str, body: Any = None, text: str | None = None) -> Any:
    """The reply's JSON, or the RegistryError it carries (returned, so the caller compares it)."""
    data = text.encode() if text is not None else json.dumps(body).encode()
    msg = await nc.request(subject, data, timeout=10)
    error = error_from_reply(msg.headers, msg.data)
    return error if error is not None else json.loads(msg.data)


def ids(items: list[dict[str, Any]]) -> list[str]:
    return [str(v["name"]) for v in items]


def expect_error(found: Any, code: str, paths: list[str] | None) -> None:
    assert isinstance(found, RegistryError), f"expected {code}, got a reply: {found!r}"
    assert found.code == code, (found.code, found.message)
    if paths is not None:
        assert {i.path for i in found.issues} == set(paths), found.issues


def expect_reply(found: Any, expected: dict[str, Any]) -> None:
    assert not isinstance(found, RegistryError), f"expected a reply, got {found!r}"
    problem = mismatch(expected, found)
    assert problem is None, problem


# ---- specs.json ----

SPECS = vectors("specs")


@pytest.mark.parametrize("vector", SPECS, ids=ids(SPECS))
def test_spec_vector_against_the_models(vector: dict[str, Any]) -> None:
    if vector["valid"]:
        spec = validate_spec(vector["spec"])
        if "expect" in vector:
            problem = mismatch(vector["expect"], spec.model_dump(mode="json", by_alias=True))
            assert problem is None, problem
    else:
        with pytest.raises(InvalidSpecError) as caught:
            validate_spec(vector["spec"])
        assert caught.value.code == vector["code"]
        assert {i.path for i in caught.value.issues} == set(vector["paths"]), caught.value.issues


def spec_subject(spec: Any, register_as: str | None) -> tuple[str, str | None]:
    """The register subject of a spec vector, and its tenant (protocol/vectors/README.md)."""
    agent_type = spec.get("agent_type") if isinstance(spec, dict) else None
    if not isinstance(agent_type, str) or not AGENT_TYPE_RE.fullmatch(agent_type):
        agent_type = register_as
    tenant = spec.get("tenant_scope") if isinstance(spec, dict) else None
    if isinstance(tenant, str) and TENANT_RE.fullmatch(tenant):
        return f"registry.tenant.{tenant}.register.{agent_type}", tenant
    return f"registry.register.{agent_type}", None


@pytest.mark.parametrize("vector", SPECS, ids=ids(SPECS))
async def test_spec_vector_against_the_registry(nc: NatsClient, vector: dict[str, Any]) -> None:
    subject, tenant = spec_subject(vector["spec"], vector.get("register_as"))
    found = await send(nc, subject, {"spec": vector["spec"]})
    if not vector["valid"]:
        wire = vector.get("wire") or {"code": vector["code"], "paths": vector["paths"]}
        expected_paths = wire["paths"]
        expect_error(found, wire["code"], expected_paths)
        return
    assert not isinstance(found, RegistryError), found
    if "warnings" in vector:
        assert warning_paths(found["warnings"]) == vector["warnings"]
    got = await RegistryClient(nc, tenant=tenant).get(found["agent_type"], min_revision=found["revision"])
    view = got.model_dump(mode="json", by_alias=True)["agent"]
    if "expect" in vector:
        problem = mismatch(vector["expect"], view)
        assert problem is None, problem
    # What the registry stored is a spec the models accept.
    AgentSpec.model_validate(view)


# ---- cards.json, toolspecs.json and servers.json ----

# Each file's register body field, and the vector's key holding what goes in it.
IMPORT_FORMS = {
    "cards": ("a2a_card", "card"),
    "toolspecs": ("mcp_toolspec", "toolspec"),
    "servers": ("mcp_server", "server"),
}
IMPORTS = [(file, field, key, v) for file, (field, key) in IMPORT_FORMS.items() for v in vectors(file)]


@pytest.mark.parametrize(
    ("file", "field", "key", "vector"), IMPORTS, ids=[f"{f}-{v['name']}" for f, _, _, v in IMPORTS]
)
async def test_import_vector_against_the_registry(
    nc: NatsClient, file: str, field: str, key: str, vector: dict[str, Any]
) -> None:
    body = {field: vector[key], **vector.get("with", {})}
    tenant = body.get("tenant_scope") if isinstance(body.get("tenant_scope"), str) else None
    root = f"registry.tenant.{tenant}" if tenant else "registry"
    found = await send(nc, f"{root}.register.{vector['agent_type']}", body)
    if not vector["valid"]:
        expect_error(found, vector["code"], vector["paths"])
        return
    assert not isinstance(found, RegistryError), found
    if "warnings" in vector:
        assert warning_paths(found["warnings"]) == vector["warnings"]
    got = await RegistryClient(nc, tenant=tenant).get(vector["agent_type"], min_revision=found["revision"])
    view = got.model_dump(mode="json", by_alias=True)["agent"]
    problem = mismatch(vector["expect"], view)
    assert problem is None, problem
    AgentSpec.model_validate(view)


# ---- requests.json ----

REQUESTS = load("requests")


@pytest.fixture(scope="module")
def fresh_stack() -> Iterator[Stack]:
    s = Stack()
    yield s
    s.close()


@pytest.fixture(scope="module")
async def fleet(fresh_stack: Stack) -> AsyncIterator[NatsClient]:
    """A new registry holding the vectors' schemas and fleet, its view caught up with them."""
    nc = await connect(fresh_stack.url)
    revision = 0
    for schema in REQUESTS["schemas"]:
        put = await send(nc, f"registry.schema.put.{schema['name']}", {k: schema[k] for k in ("version", "schema")})
        assert not isinstance(put, RegistryError), put
        revision = max(revision, put["revision"])
    for spec in REQUESTS["fleet"]:
        subject, _ = spec_subject(spec, None)
        reply = await send(nc, subject, {"spec": spec})
        assert not isinstance(reply, RegistryError), reply
        revision = max(revision, reply["revision"])
    await RegistryClient(nc).list(limit=1, min_revision=revision)
    yield nc
    await nc.drain()


@pytest.mark.parametrize("vector", REQUESTS["vectors"], ids=ids(REQUESTS["vectors"]))
async def test_request_vector_against_the_registry(fleet: NatsClient, vector: dict[str, Any]) -> None:
    tail = vector.get("subject") or vector["op"]
    root = f"registry.tenant.{vector['tenant']}" if "tenant" in vector else "registry"
    found = await send(fleet, f"{root}.{tail}", vector.get("body"), vector.get("body_text"))
    expect = vector["expect"]
    if "error" in expect:
        expect_error(found, expect["error"], expect.get("paths"))
        return
    expect_reply(found, expect["reply"])
    model = REPLY_MODELS.get(vector["op"])
    if model is not None:
        model.model_validate(found)
