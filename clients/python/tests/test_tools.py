"""tools_for(): the capability projection as OpenAI and Anthropic tool definitions, and back to call()."""

from __future__ import annotations

import re

from nats.aio.client import Client as NatsClient

from agent_registry import Agent, Capability, RegistryClient, tool_name, tools_for

from .conftest import make_spec, unique
from .harness import in_view

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def test_names_fit_both_apis() -> None:
    assert tool_name("text.summarize") == "text__summarize"
    long = "a" * 60 + ".b"
    assert NAME.fullmatch(tool_name(long))
    assert tool_name(long) != tool_name("a" * 60 + ".c")


async def test_tools_from_the_projection_round_trip_through_call(nc: NatsClient, client: RegistryClient) -> None:
    agent_type = unique("tools")
    obj, scalar = f"tools.{agent_type}.obj", f"tools.{agent_type}.scalar"
    caps = [
        Capability(
            name=obj,
            description="Echoes an object",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            output_schema={},
        ),
        Capability(name=scalar, description="Doubles a number", input_schema={"type": "number"}, output_schema={}),
    ]
    agent = Agent(nc, make_spec(agent_type, capabilities=caps), handle_signals=False)

    @agent.task(obj)
    async def echo(payload: dict[str, str]) -> dict[str, str]:
        return payload

    @agent.task(scalar)
    async def double(payload: float) -> float:
        return payload * 2

    async with agent:
        await in_view(client, agent)
        mine = [e async for e in client.capabilities_all() if e.name in (obj, scalar)]
        tools = tools_for(mine)
        openai = {t["function"]["name"]: t for t in tools.openai}
        anthropic = {t["name"]: t for t in tools.anthropic}
        assert set(openai) == set(anthropic) == {tool_name(obj), tool_name(scalar)}
        assert openai[tool_name(obj)] == {
            "type": "function",
            "function": {
                "name": tool_name(obj),
                "description": "Echoes an object",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            },
        }
        # A schema that is not an object is offered as the one argument `payload`.
        assert anthropic[tool_name(scalar)]["input_schema"] == {
            "type": "object",
            "properties": {"payload": {"type": "number"}},
            "required": ["payload"],
        }
        # What a model would answer with, back to capability and payload, then delegated.
        capability, payload = tools.resolve(tool_name(scalar), {"payload": 21})
        assert (capability, payload) == (scalar, 21)
        assert (await client.call(capability, payload)).reply == 42
        capability, payload = tools.resolve(tool_name(obj), {"text": "hi"})
        assert (await client.call(capability, payload)).reply == {"text": "hi"}
