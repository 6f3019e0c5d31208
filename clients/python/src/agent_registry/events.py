"""``watch()``: the registry's stored events (PROTOCOL.md section 5), replayed from a stream sequence or a
time and then followed live, in store order.

The consumer is an ephemeral push consumer that this iterator creates and deletes: ending the loop
(``break``, an exception, ``aclose()``) deletes it at once; a reader that dies without doing so
leaves it until the server has seen nobody read it for ``inactive_threshold`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from .replies import CloudEvent

DEFAULT_STREAM = "REGISTRY_EVENTS"

APPROVAL_EVENTS = ("registry.agent.pending", "registry.agent.approved", "registry.agent.rejected")
"""The approval gate's event types (protocol v1.2): ``watch(types=APPROVAL_EVENTS)``; each event's ``data``
reads as :class:`~agent_registry.replies.ApprovalData`."""


@dataclass(frozen=True, slots=True)
class WatchedEvent:
    seq: int
    """The event's stream sequence: resume after it with ``since=seq + 1``."""
    event: CloudEvent


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS wildcard matching: ``*`` one token, ``>`` one or more trailing tokens."""
    want, got = pattern.split("."), subject.split(".")
    for i, token in enumerate(want):
        if token == ">":
            return len(got) > i
        if i >= len(got) or (token != "*" and token != got[i]):
            return False
    return len(got) == len(want)


def _type_subject(prefix: str, event_type: str) -> str:
    short = event_type.removeprefix("registry.")
    return f"{prefix}.{short}.>" if not short.startswith("alert.") else f"{prefix}.{short}"


async def watch(
    nc: NatsClient,
    *,
    since: int | datetime.datetime | None = None,
    types: Sequence[str] | None = None,
    agent_type: str | None = None,
    stream: str = DEFAULT_STREAM,
    prefix: str = "registry",
    inactive_threshold: float = 30.0,
    idle_heartbeat: float = 5.0,
) -> AsyncGenerator[WatchedEvent, None]:
    """Events of the ``REGISTRY_EVENTS`` stream as they are stored.

    ``since``: a stream sequence (the first one delivered) or a time; absent, new events only.
    ``types``: event types, full (``registry.agent.registered``) or short (``agent.registered``).
    ``agent_type``: only agent events of this type.
    """
    js = nc.jetstream()
    filters = [_type_subject(prefix, t) for t in types] if types else [f"{prefix}.>"]
    if agent_type is not None:
        agent_filters = [f.removesuffix(">") + agent_type for f in filters if f.endswith(".>") and ".agent." in f]
        filters = agent_filters if types else [f"{prefix}.agent.*.{agent_type}"]
    if isinstance(since, datetime.datetime):
        policy = {"deliver_policy": DeliverPolicy.BY_START_TIME, "opt_start_time": since.astimezone(datetime.UTC)}
    elif isinstance(since, int):
        policy = {"deliver_policy": DeliverPolicy.BY_START_SEQUENCE, "opt_start_seq": since}
    else:
        policy = {"deliver_policy": DeliverPolicy.NEW}
    inbox = nc.new_inbox()
    queue: asyncio.Queue[Msg] = asyncio.Queue()

    async def deliver(msg: Msg) -> None:
        await queue.put(msg)

    sub = await nc.subscribe(inbox, cb=deliver)
    # The server filters only on one event type: nats-server 2.9 refuses a filter that is not within one
    # of the stream's subjects (one per event type), and filter_subjects needs 2.10. The rest is matched here.
    server_filter = filters[0] if types is not None and len(types) == 1 else None
    match_here = server_filter is None and filters != [f"{prefix}.>"]
    config = ConsumerConfig(
        deliver_subject=inbox,
        ack_policy=AckPolicy.NONE,
        inactive_threshold=inactive_threshold,
        idle_heartbeat=idle_heartbeat,
        flow_control=True,
        mem_storage=True,
        num_replicas=1,
        filter_subject=server_filter,
        **policy,  # type: ignore[arg-type]
    )
    consumer = None
    try:
        info = await js.add_consumer(stream, config)
        consumer = info.name
        while True:
            msg = await queue.get()
            if (msg.headers and msg.headers.get("Status") == "100") or not msg.data:
                # Idle heartbeats and flow-control requests: the latter want an empty reply.
                if msg.reply:
                    await nc.publish(msg.reply, b"")
                continue
            if match_here and not any(subject_matches(f, msg.subject) for f in filters):
                continue
            seq = msg.metadata.sequence.stream
            yield WatchedEvent(seq=seq, event=CloudEvent.model_validate(json.loads(msg.data)))
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()
        if consumer is not None:
            with contextlib.suppress(Exception):
                await js.delete_consumer(stream, consumer)
