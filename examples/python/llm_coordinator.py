"""An LLM coordinator: it offers the fleet's capabilities to a model as function-calling tools, lets the model
choose one for the task, and delegates the call through the registry (payload checked before it is sent).

    NATS_URL=nats://127.0.0.1:4222 OPENAI_API_KEY=... python examples/python/llm_coordinator.py "some text to summarize"

With OPENAI_API_KEY set it asks OpenAI's Chat Completions API (OPENAI_MODEL, default gpt-4o-mini); without
it, the plan is the registry's keyword search over the same capabilities (so the example runs offline).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from typing import Any

from agent_registry import RegistryClient, ToolSet, connect, tools_for


def plan_with_openai(task: str, tools: ToolSet, key: str) -> tuple[str, dict[str, Any]]:
    body = {
        "model": os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        "messages": [
            {"role": "system", "content": "Pick the one tool that does the user's task and fill in its arguments."},
            {"role": "user", "content": task},
        ],
        "tools": tools.openai,
        "tool_choice": "required",
    }
    request = urllib.request.Request(
        "https://api.openai.com/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        call = json.load(response)["choices"][0]["message"]["tool_calls"][0]["function"]
    return str(call["name"]), dict(json.loads(call["arguments"]))


async def plan_with_search(task: str, tools: ToolSet, registry: RegistryClient) -> tuple[str, dict[str, Any]]:
    words = " ".join(w for w in task.split() if len(w) > 3) or task
    known = {t.capability: t for t in tools.tools}
    for hit in (await registry.search(words, limit=10)).results:
        tool = known.get(hit.capability)
        if tool is not None:
            return tool.name, ({"payload": task} if tool.wrapped else {"text": task})
    raise SystemExit("no capability matches the task")


async def main(task: str) -> None:
    nc = await connect()
    registry = RegistryClient(nc)
    tools = tools_for([entry async for entry in registry.capabilities_all()])
    key = os.environ.get("OPENAI_API_KEY")
    if key:
        name, arguments = await asyncio.to_thread(plan_with_openai, task, tools, key)
    else:
        name, arguments = await plan_with_search(task, tools, registry)
    capability, payload = tools.resolve(name, arguments)
    result = await registry.call(capability, payload)
    print(f"plan: {capability} by {result.agent_type}")
    print(f"answer: {json.dumps(result.reply)}")
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "Summarize: NATS moves messages. The registry tracks agents."))
