"""The models' rules are the registry's: what they accept it stores as sent, what they refuse it refuses too."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agent_registry import AgentSpec, Capability, InvalidRequestError, InvalidSpecError, RegistryClient, validate_spec
from agent_registry.models import schema_of

from .conftest import make_spec, unique


class Ticket(BaseModel):
    title: str
    priority: int = 3


def test_defaults_are_those_of_protocol_section_3() -> None:
    spec = make_spec("defaults")
    assert spec.supported_patterns == ["coordinator_managed"]
    assert (spec.max_concurrent_tasks, spec.task_timeout_ms, spec.llm_timeout_ms, spec.max_retries) == (
        10,
        60000,
        30000,
        3,
    )
    assert spec.reflection_config is not None
    assert spec.reflection_config.model_dump() == {
        "enabled": True,
        "max_rounds": 2,
        "criteria": ["completeness", "accuracy"],
        "model": "gpt-4o-mini",
    }
    assert (spec.evaluators, spec.tools, spec.tenant_scope, spec.tags, spec.weight, spec.kind) == (
        [],
        [],
        None,
        {},
        1,
        "agent",
    )
    wire = spec.to_wire()
    assert "runtime" not in wire
    assert "confidence_hint" not in wire["capabilities"][0]
    assert make_spec("noreflect", reflection_config=None).to_wire()["reflection_config"] is None


def test_a_pydantic_model_class_is_sent_as_its_json_schema() -> None:
    cap = Capability(name="tickets.open", description="opens", input_schema=Ticket, output_schema=Ticket)
    assert cap.input_schema == Ticket.model_json_schema()
    assert schema_of(Ticket) == Ticket.model_json_schema()
    assert schema_of({"type": "string"}) == {"type": "string"}


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("version not semver", {"version": "1.0"}, "version"),
    ("no capabilities", {"capabilities": []}, "capabilities"),
    ("wildcard subject", {"nats_subject": "agents.*"}, "nats_subject"),
    ("inbox subject", {"nats_subject": "_INBOX.x"}, "nats_subject"),
    ("queue group with a dot", {"consumer_group": "a.b"}, "consumer_group"),
    ("zero concurrency", {"max_concurrent_tasks": 0}, "max_concurrent_tasks"),
    ("short task timeout", {"task_timeout_ms": 999}, "task_timeout_ms"),
    ("negative retries", {"max_retries": -1}, "max_retries"),
    ("a string for a number", {"max_concurrent_tasks": "10"}, "max_concurrent_tasks"),
    ("weight over 1000", {"weight": 1001}, "weight"),
    ("zero weight", {"weight": 0}, "weight"),
    ("bad tenant", {"tenant_scope": "Acme"}, "tenant_scope"),
    ("acp_port out of range", {"acp_port": 70000}, "acp_port"),
    ("unknown pattern", {"supported_patterns": ["anarchy"]}, "supported_patterns.0"),
    ("reflection rounds", {"reflection_config": {"max_rounds": 9}}, "reflection_config.max_rounds"),
    (
        "bidi override in a dependency",
        {"depends": [{"type": "agent", "name": "a\u202eb", "version": "1.0.0"}]},
        "depends.0.name",
    ),
    ("dependency range", {"depends": [{"type": "agent", "name": "x", "version": "^1.0.0"}]}, "depends.0.version"),
]


def _raw(**changes: Any) -> dict[str, Any]:
    raw = make_spec(unique("raw")).to_wire()
    raw.update(changes)
    return raw


@pytest.mark.parametrize(("about", "changes", "path"), BAD, ids=[b[0] for b in BAD])
async def test_a_spec_the_models_refuse_the_registry_refuses_at_the_same_path(
    client: RegistryClient, about: str, changes: dict[str, Any], path: str
) -> None:
    raw = _raw(**changes)
    with pytest.raises(InvalidSpecError) as local:
        validate_spec(raw)
    assert path in {i.path for i in local.value.issues}, about
    with pytest.raises(InvalidSpecError) as remote:
        await client.register(raw)
    assert any(i.path.endswith(path) for i in remote.value.issues), (about, remote.value.issues)


async def test_a_bad_agent_type_never_leaves_the_client(client: RegistryClient) -> None:
    # It is a subject token: the registry could only answer for another subject (or none).
    raw = _raw(agent_type="Bad")
    with pytest.raises(InvalidSpecError) as local:
        validate_spec(raw)
    assert {i.path for i in local.value.issues} == {"agent_type"}
    with pytest.raises(InvalidRequestError):
        await client.register(raw)


def test_capability_rules() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        validate_spec(_raw(capabilities=[{"name": "a b", "description": "", "input_schema": {}, "output_schema": {}}]))
    assert {i.path for i in caught.value.issues} == {"capabilities.0.name"}
    dup = {"name": "a.b", "description": "", "input_schema": {}, "output_schema": {}}
    with pytest.raises(InvalidSpecError):
        validate_spec(_raw(capabilities=[dup, dup]))
    hint = {**dup, "confidence_hint": 1.5}
    with pytest.raises(InvalidSpecError) as caught:
        validate_spec(_raw(capabilities=[hint]))
    assert {i.path for i in caught.value.issues} == {"capabilities.0.confidence_hint"}


async def test_a_spec_the_models_accept_is_stored_as_sent(client: RegistryClient) -> None:
    spec = AgentSpec.model_validate(
        _raw(
            runtime="python",
            acp_port=8000,
            weight=2.5,
            tags={"lang": "en"},
            tenant_scope=None,
            providers=[{"id": "openai", "models": ["gpt-4o"], "kind": "llm", "capabilities": {"tools": True}}],
            display_name="Raw agent",
            reflection_config=None,
        )
    )
    reply = await client.register(spec)
    assert reply.warnings == []
    view = (await client.get(spec.agent_type, min_revision=reply.revision)).agent
    stored = view.model_dump(mode="json", by_alias=True)
    for key, value in spec.to_wire().items():
        if key != "capabilities":
            assert stored[key] == value, key
