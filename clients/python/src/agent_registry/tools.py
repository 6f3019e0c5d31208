"""The capability projection as LLM function-calling tools (OpenAI and Anthropic formats, plain dicts).

Both formats want a tool name of ``[A-Za-z0-9_-]{1,64}`` and an object schema for the arguments: a
capability name's dots become ``__``, and a capability whose input schema is not an object schema is
offered with one required argument ``payload`` (as the registry's ``toolspec`` export does).
:meth:`ToolSet.resolve` turns a model's tool call back into ``(capability, payload)`` for ``call()``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .replies import CapabilityEntry, Provider

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def tool_name(capability: str) -> str:
    """``text.summarize`` → ``text__summarize``; a name past 64 characters is cut and given a hash suffix."""
    name = capability.replace(".", "__")
    if _NAME_RE.fullmatch(name):
        return name
    digest = hashlib.sha256(capability.encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', name)[:55]}_{digest}"


def _is_object_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "object"


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    capability: str
    description: str
    parameters: dict[str, Any]
    wrapped: bool
    """True when the capability's payload is the ``payload`` argument rather than the arguments themselves."""


class ToolSet:
    """Tools for a set of capabilities; ``openai`` and ``anthropic`` are the lists an API call takes."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools
        self._by_name = {t.name: t for t in tools}

    @property
    def openai(self) -> list[dict[str, Any]]:
        """``tools=`` of the OpenAI Chat Completions API."""
        return [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self.tools
        ]

    @property
    def anthropic(self) -> list[dict[str, Any]]:
        """``tools=`` of the Anthropic Messages API."""
        return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in self.tools]

    def resolve(self, name: str, arguments: Mapping[str, Any]) -> tuple[str, Any]:
        """A model's tool call as ``(capability, payload)``; KeyError for a name this set does not hold."""
        tool = self._by_name[name]
        return tool.capability, (arguments.get("payload") if tool.wrapped else dict(arguments))


def tools_for(capabilities: Iterable[CapabilityEntry | Provider | Mapping[str, Any]]) -> ToolSet:
    """Tools from capability entries (``capabilities`` reply, cache snapshot) or plain dicts with ``name``."""
    tools: list[Tool] = []
    for cap in capabilities:
        raw = cap if isinstance(cap, Mapping) else cap.model_dump(mode="json")
        name = str(raw.get("name") or raw.get("capability") or "")
        schema = raw.get("input_schema")
        schema = {} if schema is None or schema is True else schema
        wrapped = not _is_object_schema(schema)
        parameters: dict[str, Any] = (
            {"type": "object", "properties": {"payload": schema}, "required": ["payload"]} if wrapped else dict(schema)
        )
        description = str(raw.get("description") or name)
        tools.append(Tool(tool_name(name), name, description, parameters, wrapped))
    return ToolSet(tools)
