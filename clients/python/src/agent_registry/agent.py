"""An agent's side of the registry (PROTOCOL.md sections 2 and 4) as an async context manager.

``async with Agent(nc, spec) as agent`` serves the spec's subject in its queue group, registers,
heartbeats on the interval the registry returned (±10 % jitter) with its status and
``active_tasks``, registers again on ``unknown_instance`` and after a reconnect, and on exit (or
SIGTERM/SIGINT, which end :meth:`Agent.serve_forever`) goes ``draining``, lets running tasks end,
then deregisters. A registry outage never raises into the agent: failures become events.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from .client import RegistryClient
from .errors import UnknownInstanceError, is_transient
from .models import AgentSpec, AgentStatus, InstanceStatus, JsonSchema
from .replies import RegisterReply
from .tasks import TaskHandler, TaskRouter

EventType = Literal["registered", "reregistered", "heartbeat_failed", "deregistered", "error"]


@dataclass(frozen=True, slots=True)
class AgentEvent:
    type: EventType
    reply: RegisterReply | None = None
    reason: str | None = None
    error: BaseException | None = None
    consecutive: int = 0


def _jittered(interval_ms: int) -> float:
    """The heartbeat period ±10 %, so a fleet started together does not beat in step."""
    return max(0.001, interval_ms / 1000 * (0.9 + random.random() * 0.2))


def _has_registry_ref(schema: Any) -> bool:
    """True when a schema uses a stored schema (``{"$ref": "#Name:1.0.0"}``), which only the registry resolves."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#") and not ref.startswith("#/") and ref != "#":
            return True
        return any(_has_registry_ref(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_has_registry_ref(v) for v in schema)
    return False


class Agent:
    """One instance of an agent type: registration, liveness and task serving.

    Give ``spec`` (an :class:`AgentSpec`), or ``agent_type`` with ``a2a_card``, ``mcp_toolspec``
    or ``mcp_server`` (an MCP Registry ``server.json``, v1.2, its tools inside it or beside it as
    ``mcp_toolspec``) and the fields that go beside them in ``registration`` (``nats_subject``,
    ``description``, ``version``, ...; see :meth:`RegistryClient.register`). Handlers are added
    with :meth:`task` before entering.
    """

    def __init__(
        self,
        nc: NatsClient,
        spec: AgentSpec | None = None,
        *,
        agent_type: str | None = None,
        a2a_card: Mapping[str, Any] | None = None,
        mcp_toolspec: Mapping[str, Any] | None = None,
        mcp_server: Mapping[str, Any] | None = None,
        registration: Mapping[str, Any] | None = None,
        instance_id: str | None = None,
        heartbeat_interval_ms: int | None = None,
        status: Literal["registered", "ready"] = "ready",
        metadata: Mapping[str, str] | None = None,
        replace: bool | None = None,
        tenant: str | None = None,
        prefix: str = "registry",
        timeout: float = 5.0,
        handle_signals: bool = True,
        drain_timeout: float = 30.0,
        backoff: tuple[float, float] = (0.5, 30.0),
        on_event: Callable[[AgentEvent], None] | None = None,
    ) -> None:
        if spec is None and agent_type is None:
            raise ValueError("an Agent needs a spec, or an agent_type with an a2a_card, mcp_toolspec or mcp_server")
        self.nc = nc
        self.spec = spec
        self._agent_type = spec.agent_type if spec is not None else str(agent_type)
        self._card = a2a_card
        self._toolspec = mcp_toolspec
        self._server_json = mcp_server
        self._extra = dict(registration or {})
        scope = spec.tenant_scope if spec is not None else self._extra.get("tenant_scope")
        self.client = RegistryClient(nc, prefix=prefix, tenant=tenant or scope, timeout=timeout)
        self._instance_id = instance_id
        self._interval_ms = heartbeat_interval_ms
        self._status: InstanceStatus = status
        self._metadata = metadata
        self._replace = replace
        self._handle_signals = handle_signals
        self._drain_timeout = drain_timeout
        self._backoff = backoff
        self._on_event = on_event
        self._router = TaskRouter()
        self._reply: RegisterReply | None = None
        self._active = 0
        self._max_tasks = spec.max_concurrent_tasks if spec is not None else 10
        self._slots: asyncio.Semaphore | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._sub: Subscription | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._stop_requested = asyncio.Event()
        self._stopping = False
        self._reregister: str | None = None
        self._failures = 0
        self._reconnects = 0
        self._signals: list[signal.Signals] = []
        self._pending_refs: dict[str, JsonSchema] = {}
        self._beat_now = False

    # ---- what the agent sees ----

    @property
    def agent_type(self) -> str:
        return self._agent_type

    @property
    def instance_id(self) -> str:
        return self._instance_id or ""

    @property
    def registration(self) -> RegisterReply:
        """The latest register reply (interval, eviction window, warnings)."""
        if self._reply is None:
            raise RuntimeError("the agent is not registered yet")
        return self._reply

    @property
    def active_tasks(self) -> int:
        return self._active

    @property
    def status(self) -> Literal["registered", "ready", "busy", "draining"]:
        """``busy`` while every task slot (``max_concurrent_tasks``) is taken: discover says so too."""
        if self._status == "ready" and self._active >= self._max_tasks:
            return "busy"
        return self._status

    def task(self, capability: str) -> Callable[[TaskHandler], TaskHandler]:
        """Decorator: ``@agent.task("text.summarize")`` on ``async def handle(payload) -> reply``."""

        def add(handler: TaskHandler) -> TaskHandler:
            if self.spec is not None:
                self.spec.capability(capability)  # KeyError: the spec does not offer it
            self._router.add(capability, handler)
            return handler

        return add

    # ---- lifecycle ----

    async def __aenter__(self) -> Agent:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Serves tasks (before registering: once routed to, tasks must find a listener), registers, beats."""
        self._reconnects = self._reconnect_count()
        if self.spec is not None:
            await self._serve(self.spec.nats_subject, self.spec.consumer_group, self._schemas(self.spec))
        await self._register_first()
        if self.spec is None and self._router.handlers:
            view = (await self.client.get(self._agent_type, min_revision=self.registration.revision)).agent
            self._max_tasks = view.max_concurrent_tasks
            await self._serve(
                view.nats_subject, view.consumer_group, {c.name: c.input_schema for c in view.capabilities}
            )
        await self._resolve_registry_refs()
        self._loop_task = asyncio.create_task(self._run())
        if self._handle_signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                try:
                    loop.add_signal_handler(sig, self._on_signal)
                except (ValueError, RuntimeError, NotImplementedError):
                    # Not the main thread (or no signals on this platform): the application stops the agent.
                    break
                self._signals.append(sig)

    async def serve_forever(self) -> None:
        """Returns on SIGTERM or SIGINT (or :meth:`stop`); leaving the ``async with`` then drains."""
        await self._stop_requested.wait()

    def stop(self) -> None:
        self._stop_requested.set()

    def _on_signal(self) -> None:
        # The first signal asks for a graceful stop; the default action comes back for a second one.
        self._remove_signal_handlers()
        self._stop_requested.set()

    def _remove_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        self._signals = []

    async def set_status(self, status: InstanceStatus) -> None:
        """Changes the status and sends a heartbeat with it now."""
        self._status = status
        if self._reply is not None and not self._stopping:
            await self._beat()

    async def drain(self) -> None:
        """``draining``: lookups and routes stop choosing this instance."""
        await self.set_status("draining")

    async def close(self, reason: str | None = None) -> None:
        """Drains, stops taking tasks, waits up to ``drain_timeout`` for running ones, stops beating, deregisters."""
        if self._stopping:
            return
        self._remove_signal_handlers()
        if self._reply is not None:
            await self.drain()
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self._drain_timeout)
        self._stopping = True
        self._wake.set()
        if self._loop_task is not None:
            await self._loop_task
        if self._reply is None:
            return
        try:
            await self.client.deregister(self._agent_type, self.instance_id, reason=reason)
            self._emit(AgentEvent("deregistered"))
        except UnknownInstanceError:
            self._emit(AgentEvent("deregistered"))
        except Exception as e:
            self._emit(AgentEvent("error", reason="deregister", error=e))

    # ---- registration ----

    def _schemas(self, spec: AgentSpec) -> dict[str, JsonSchema]:
        return {c.name: c.input_schema for c in spec.capabilities if not isinstance(c.input_schema, type)}

    async def _register(self) -> RegisterReply:
        # A draining instance that must register again comes back unroutable, then beats `draining`.
        status: Literal["registered", "ready"] = "ready" if self._status == "ready" else "registered"
        return await self.client.register(
            self.spec,
            agent_type=self._agent_type,
            a2a_card=self._card,
            mcp_toolspec=self._toolspec,
            mcp_server=self._server_json,
            extra=self._extra,
            instance_id=self._instance_id,
            heartbeat_interval_ms=self._interval_ms,
            status=status,
            metadata=self._metadata,
            replace=self._replace,
        )

    def _accept(self, reply: RegisterReply) -> None:
        self._reply = reply
        self._instance_id = reply.instance_id

    async def _register_first(self) -> None:
        attempt = 0
        while True:
            try:
                self._accept(await self._register())
                self._emit(AgentEvent("registered", reply=self._reply))
                return
            except Exception as e:
                if not is_transient(e):
                    raise
                self._emit(AgentEvent("error", reason="register", error=e))
                await asyncio.sleep(self._delay(attempt))
                attempt += 1

    async def _register_again(self, reason: str) -> None:
        attempt = 0
        while not self._stopping:
            try:
                reply = await self._register()
                self._accept(reply)
                self._reregister = None
                self._failures = 0
                self._emit(AgentEvent("reregistered", reply=reply, reason=reason))
                if self._status == "draining":
                    await self._beat()
                return
            except Exception as e:
                # Even a 4xx is retried: the process keeps serving and the events tell the operator.
                self._emit(AgentEvent("error", reason="reregister", error=e))
                await self._sleep(self._delay(attempt))
                attempt += 1

    async def _resolve_registry_refs(self) -> None:
        # A schema built on stored schemas is checked in the form lookup returns: refs inlined.
        statuses: list[AgentStatus] = ["ready", "registered", "draining"]
        for capability in list(self._pending_refs):
            reply = await self.client.lookup(capability, min_revision=self.registration.revision, status=statuses)
            for provider in reply.providers:
                if provider.agent_type == self._agent_type:
                    self._router.set_schema(capability, provider.input_schema)
            del self._pending_refs[capability]

    # ---- serving ----

    async def _serve(self, subject: str, queue: str, schemas: Mapping[str, JsonSchema]) -> None:
        for capability in self._router.handlers:
            schema = schemas.get(capability)
            if schema is None:
                raise KeyError(f"{self._agent_type} offers no capability {capability}")
            if _has_registry_ref(schema):
                self._pending_refs[capability] = schema
            else:
                self._router.set_schema(capability, schema)
        self._slots = asyncio.Semaphore(self._max_tasks)
        if self._router.handlers:
            self._sub = await self.nc.subscribe(subject, queue=queue, cb=self._on_task)

    async def _on_task(self, msg: Msg) -> None:
        # Handlers run concurrently, at most max_concurrent_tasks at once; the rest wait their turn.
        task = asyncio.create_task(self._handle(msg))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle(self, msg: Msg) -> None:
        assert self._slots is not None
        async with self._slots:
            self._set_active(self._active + 1)
            try:
                data, headers = await self._router.run(msg.headers, msg.data)
                if msg.reply:
                    await self.nc.publish(msg.reply, data, headers=headers)
            finally:
                self._set_active(self._active - 1)

    def _set_active(self, n: int) -> None:
        was_busy = self._active >= self._max_tasks
        self._active = max(0, n)
        if was_busy != (self._active >= self._max_tasks) and self._status == "ready":
            # Crossing into or out of busy is told at once, so discover sees it before the next beat.
            self._beat_now = True
            self._wake.set()

    # ---- heartbeats ----

    def _reconnect_count(self) -> int:
        return int(self.nc.stats.get("reconnects", 0))

    def _delay(self, attempt: int) -> float:
        initial, most = self._backoff
        return float(min(most, initial * 2 ** min(attempt, 30)) * (0.5 + random.random() / 2))

    async def _sleep(self, seconds: float) -> None:
        """Sleeps, or less when something (a status change, close) wakes the loop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=seconds)
        self._wake.clear()

    async def _run(self) -> None:
        while not self._stopping:
            if self._reregister is not None:
                await self._register_again(self._reregister)
                continue
            if not self._beat_now:
                await self._sleep(_jittered(self.registration.heartbeat_interval_ms))
            if self._stopping:
                break
            reconnects = self._reconnect_count()
            if reconnects != self._reconnects:
                # After a reconnect the registry may have evicted us: registering again is idempotent.
                self._reconnects = reconnects
                self._reregister = "reconnect"
                continue
            self._beat_now = False
            await self._beat()

    async def _beat(self) -> None:
        # A reply slower than the interval is useless: the next beat is already due.
        timeout = min(self.client.timeout, self.registration.heartbeat_interval_ms / 1000)
        try:
            await self.client.heartbeat(
                self._agent_type, self.instance_id, status=self._status, active_tasks=self._active, timeout=timeout
            )
            self._failures = 0
        except UnknownInstanceError:
            self._reregister = "unknown_instance"
            self._wake.set()
        except Exception as e:
            self._failures += 1
            self._emit(AgentEvent("heartbeat_failed", error=e, consecutive=self._failures))

    def _emit(self, event: AgentEvent) -> None:
        if self._on_event is None:
            return
        # A faulty listener must not stop the heartbeats.
        with contextlib.suppress(Exception):
            self._on_event(event)
