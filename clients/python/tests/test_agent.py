"""Agent against a real registry: registration, task serving with payload checks, call(), busy, drain, leave."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from nats.aio.client import Client as NatsClient
from pydantic import BaseModel

from agent_registry import (
    Agent,
    AgentEvent,
    AgentReplyError,
    AgentRequestError,
    Capability,
    InvalidPayloadError,
    InvalidSpecError,
    RegistryClient,
    TaskError,
)

from .conftest import make_spec, unique
from .harness import deregistered_in_view, eventually, in_view


class Question(BaseModel):
    question: str
    max_words: int = 10


class Answer(BaseModel):
    answer: str


async def test_an_agent_serves_tasks_that_call_sends_and_leaves_on_exit(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("echo")
    events: list[AgentEvent] = []
    agent = Agent(nc, make_spec(agent_type), heartbeat_interval_ms=200, on_event=events.append, handle_signals=False)

    @agent.task("text.echo")
    async def echo(payload: dict[str, str]) -> dict[str, str]:
        return {"text": payload["text"].upper()}

    async with agent:
        assert agent.registration.heartbeat_interval_ms == 200
        assert [e.type for e in events] == ["registered"]
        # min_revision: the call routes and checks on a view that holds the registration.
        result = await client.call(
            "text.echo", {"text": "hi"}, agent_type=agent_type, min_revision=agent.registration.revision
        )
        assert result.reply == {"text": "HI"}
        assert result.nats_subject == f"agents.{agent_type}.tasks"
        before = (await client.get(agent_type)).agent.instances[0].last_heartbeat

        async def beat_seen() -> bool:
            return (await client.get(agent_type)).agent.instances[0].last_heartbeat != before

        await eventually(beat_seen, "a heartbeat after registration")
    await deregistered_in_view(client, agent_type)
    assert events[-1].type == "deregistered"


async def test_payload_checks_and_error_shapes(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("strict")
    agent = Agent(nc, make_spec(agent_type), handle_signals=False)

    @agent.task("text.echo")
    async def echo(payload: dict[str, str]) -> dict[str, Any]:
        if payload["text"] == "refuse":
            raise TaskError("not today", code="refused", status=422)
        if payload["text"] == "crash":
            raise RuntimeError("handler broke")
        if payload["text"] == "wrong":
            return {"text": 1}
        return {"text": payload["text"]}

    async with agent:
        await in_view(client, agent)
        # call(): the registry refuses the payload, so it is never sent.
        with pytest.raises(InvalidPayloadError) as refused:
            await client.call("text.echo", {"text": 5}, agent_type=agent_type)
        assert refused.value.direction == "input"
        assert refused.value.issues[0].path == "payload.text"
        # A plain request that skips the registry's check meets the agent's own (jsonschema) check.
        msg = await nc.request(f"agents.{agent_type}.tasks", json.dumps({"nope": 1}).encode(), timeout=5)
        assert msg.headers is not None
        assert msg.headers["Nats-Service-Error-Code"] == "400"
        body = json.loads(msg.data)
        assert body["error"]["code"] == "invalid_payload"
        assert body["error"]["issues"][0]["path"] == "payload"
        with pytest.raises(AgentReplyError) as custom:
            await client.call("text.echo", {"text": "refuse"}, agent_type=agent_type)
        assert (custom.value.status, custom.value.code) == (422, "refused")
        with pytest.raises(AgentReplyError) as crashed:
            await client.call("text.echo", {"text": "crash"}, agent_type=agent_type)
        assert crashed.value.code == "agent_error"
        assert "handler broke" in str(crashed.value)
        with pytest.raises(InvalidPayloadError) as bad_reply:
            await client.call("text.echo", {"text": "wrong"}, agent_type=agent_type)
        assert bad_reply.value.direction == "output"
        assert bad_reply.value.reply == {"text": 1}
        unchecked = await client.call("text.echo", {"text": "wrong"}, agent_type=agent_type, check_reply=False)
        assert unchecked.reply == {"text": 1}


async def test_pydantic_models_as_schemas_and_dispatch_by_capability(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("qa")
    ask, shout = f"qa.{agent_type}.ask", f"qa.{agent_type}.shout"
    caps = [
        Capability(name=ask, description="answers", input_schema=Question, output_schema=Answer),
        Capability(name=shout, description="shouts", input_schema={"type": "string"}, output_schema={}),
    ]
    agent = Agent(nc, make_spec(agent_type, capabilities=caps), handle_signals=False)

    @agent.task(ask)
    async def answer(payload: dict[str, Any]) -> Answer:
        q = Question.model_validate(payload)
        return Answer(answer=f"{q.question}? {q.max_words}")

    @agent.task(shout)
    async def loud(payload: str) -> str:
        return payload.upper()

    async with agent:
        await in_view(client, agent)
        provider = (await client.lookup(ask)).providers[0]
        assert provider.input_schema == Question.model_json_schema()
        # call() routes by capability and tells the agent which one (header), so one subject serves both.
        assert (await client.call(ask, {"question": "why"})).reply == {"answer": "why? 10"}
        assert (await client.call(shout, "hey")).reply == "HEY"
        # Without the header the agent picks the one capability whose schema takes the payload.
        msg = await nc.request(f"agents.{agent_type}.tasks", b'"quiet"', timeout=5)
        assert json.loads(msg.data) == "QUIET"


async def test_busy_when_every_slot_is_taken_and_draining_leaves_routing(
    nc: NatsClient, client: RegistryClient
) -> None:
    agent_type = unique("busy")
    cap = f"slow.{agent_type}"
    release = asyncio.Event()
    agent = Agent(nc, make_spec(agent_type, capability=cap, max_concurrent_tasks=1), handle_signals=False)

    @agent.task(cap)
    async def slow(payload: dict[str, str]) -> dict[str, str]:
        await release.wait()
        return payload

    async with agent:
        await in_view(client, agent)
        pending = asyncio.create_task(client.call(cap, {"text": "wait"}))

        async def discovered(status: str) -> bool:
            agents = (await client.discover(capability=cap)).agents
            return bool(agents) and agents[0].status == status

        await eventually(lambda: discovered("busy"), "discover says busy")
        assert agent.status == "busy"
        assert agent.active_tasks == 1
        release.set()
        assert (await pending).reply == {"text": "wait"}
        await eventually(lambda: discovered("ready"), "discover says ready again")
        await agent.drain()
        status: str = agent.status
        assert status == "draining"

        # The drain's heartbeat revision is not at hand: wait for the view to show it.
        async def drained() -> bool:
            view = (await client.get(agent_type)).agent
            return view.instances[0].status == "draining" and (await client.lookup(cap)).providers == []

        await eventually(drained, "draining in get, and out of lookups")


async def test_an_agent_from_an_a2a_card_serves_its_skill(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("cardagent")
    skill = f"card.{agent_type}"
    card = {
        "name": "Card agent",
        "description": "from a card",
        "version": "1.2.0",
        "supportedInterfaces": [{"url": "https://example.test/a2a", "protocolBinding": "JSONRPC"}],
        "skills": [{"id": skill, "name": "Greets", "description": "greets", "tags": []}],
        "capabilities": {},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
    }
    agent = Agent(nc, agent_type=agent_type, a2a_card=card, registration={"owner_team": "py"}, handle_signals=False)

    @agent.task(skill)
    async def greet(payload: Any) -> str:
        return f"hello {payload}"

    async with agent:
        assert agent.registration.a2a_version == "1.0"
        await in_view(client, agent)
        result = await client.call(skill, "card")
        assert result.reply == "hello card"
        assert result.nats_subject == f"agent.tasks.{agent_type}"


async def test_an_agent_from_a_server_json_serves_its_tool(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("serveragent")
    tool = f"tool.{agent_type}"
    tools = [{"name": tool, "description": "greets", "inputSchema": {"type": "object"}}]
    server = {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
        "name": f"io.example.py/{agent_type}",
        "title": "Server agent",
        "description": "from a server.json",
        "version": "2.0.0",
        "_meta": {"io.modelcontextprotocol.registry/publisher-provided": {"tools": tools}},
    }
    agent = Agent(nc, agent_type=agent_type, mcp_server=server, registration={"owner_team": "py"}, handle_signals=False)

    @agent.task(tool)
    async def greet(payload: Any) -> str:
        return f"hello {payload['name']}"

    async with agent:
        assert agent.registration.warnings == []
        result = await client.call(tool, {"name": "mcp"})
        assert result.reply == "hello mcp"
        assert result.nats_subject == f"mcp.tools.{agent_type}"


async def test_call_without_a_listener_and_a_refused_spec(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("absent")
    registered = await client.register(make_spec(agent_type))
    # Read your writes: call() sends no min_revision, and this agent type must be known to it.
    await client.get(agent_type, min_revision=registered.revision)
    with pytest.raises(AgentRequestError) as caught:
        await client.call("text.echo", {"text": "x"}, agent_type=agent_type, timeout=2)
    assert caught.value.reason in ("unreachable", "timeout")
    spec = make_spec(unique("refused")).to_wire()
    spec["capabilities"][0]["input_schema"] = {"type": "no-such-type"}
    with pytest.raises(InvalidSpecError):
        await client.register(spec)
