"""An agent process for the tests that signal it: serves ``text.echo`` and prints its events as JSON lines.

python -m tests.agent_proc <nats_url> <agent_type> <heartbeat_interval_ms>
"""

from __future__ import annotations

import asyncio
import json
import sys

from agent_registry import Agent, AgentEvent, connect

from .conftest import make_spec


def report(event: AgentEvent) -> None:
    line = {
        "type": event.type,
        "reason": event.reason,
        "instance_id": event.reply.instance_id if event.reply else None,
        "revision": event.reply.revision if event.reply else None,
    }
    print(json.dumps(line), flush=True)


async def main(url: str, agent_type: str, interval_ms: int) -> None:
    nc = await connect(url)
    agent = Agent(nc, make_spec(agent_type), heartbeat_interval_ms=interval_ms, on_event=report, drain_timeout=5)

    @agent.task("text.echo")
    async def echo(payload: dict[str, str]) -> dict[str, str]:
        return {"text": payload["text"]}

    async with agent:
        await agent.serve_forever()
    print(json.dumps({"type": "exited"}), flush=True)
    await nc.drain()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
