"""A Python agent offering `text.summarize` (the TypeScript example's twin): it serves tasks on its subject in
its queue group, keeps itself registered, and on SIGTERM or Ctrl-C drains, deregisters and exits.

    NATS_URL=nats://127.0.0.1:4222 python examples/python/summarizer_agent.py
"""

from __future__ import annotations

import asyncio
import re

from pydantic import BaseModel, Field

from agent_registry import Agent, AgentSpec, Capability, connect


class Text(BaseModel):
    text: str
    max_sentences: int = Field(default=2, ge=1)


class Summary(BaseModel):
    summary: str


spec = AgentSpec(
    agent_type="py-summarizer",
    version="1.0.0",
    description="Summarises English text by keeping its first sentences.",
    owner_team="examples",
    capabilities=[
        Capability(
            name="text.summarize",
            description="Short summary of a text",
            input_schema=Text,
            output_schema=Summary,
            confidence_hint=0.6,
            tags=["english", "fast"],
            examples=["summarize this article in two sentences"],
        )
    ],
    nats_subject="agents.py-summarizer.tasks",
    consumer_group="py-summarizer",
    max_concurrent_tasks=4,
    runtime="python",
)


async def main() -> None:
    nc = await connect()
    agent = Agent(nc, spec, on_event=lambda e: print(f"{e.type} {e.reason or ''}", flush=True))

    @agent.task("text.summarize")
    async def summarize(payload: dict[str, object]) -> Summary:
        task = Text.model_validate(payload)
        sentences = re.findall(r"[^.!?]+[.!?]*", task.text)
        return Summary(summary="".join(sentences[: task.max_sentences]).strip())

    async with agent:
        print(f"serving text.summarize as {agent.instance_id}", flush=True)
        await agent.serve_forever()
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main())
