"""A coordinator's capability cache: the ``capabilities`` projection kept in memory, refreshed when a
``registry.capability.changed`` event arrives, after a reconnect and every ``resync`` seconds.

While the registry is unreachable it goes on answering from the last state it had, marked
``stale`` with its age: the design asks coordinators to keep planning through an outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from .client import RegistryClient
from .replies import CapabilityEntry

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Cached(Generic[T]):
    value: T
    stale: bool
    """True when the last refresh failed: the value is the last one known."""
    age: float
    """Seconds since the value was fetched."""
    revision: int


class CapabilityCache:
    """``async with CapabilityCache(client) as cache: cache.lookup("text.summarize")``."""

    def __init__(
        self,
        client: RegistryClient,
        *,
        resync: float = 30.0,
        debounce: float = 0.05,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.client = client
        self.resync = resync
        self.debounce = debounce
        self._on_error = on_error
        self._entries: dict[str, CapabilityEntry] = {}
        self._revision = 0
        self._fetched_at = 0.0
        self._stale = True
        self._refresh_asked = asyncio.Event()
        self._sub: Subscription | None = None
        self._task: asyncio.Task[None] | None = None
        self._reconnects = 0
        self.refreshes = 0

    async def __aenter__(self) -> CapabilityCache:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Subscribes to the change events, then loads the projection (raising if the registry cannot answer now)."""
        subject = f"{self.client.prefix}.capability.changed.>"
        self._sub = await self.client.nc.subscribe(subject, cb=self._on_change)
        self._reconnects = int(self.client.nc.stats.get("reconnects", 0))
        await self._refresh()
        self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    @property
    def revision(self) -> int:
        return self._revision

    def lookup(self, capability: str) -> Cached[CapabilityEntry | None]:
        """The capability with its providers and schemas, or ``None`` when no ready agent offers it."""
        return self._cached(self._entries.get(capability))

    def snapshot(self) -> Cached[list[CapabilityEntry]]:
        return self._cached(list(self._entries.values()))

    def _cached(self, value: T) -> Cached[T]:
        return Cached(value=value, stale=self._stale, age=time.monotonic() - self._fetched_at, revision=self._revision)

    async def _on_change(self, msg: Msg) -> None:
        self._refresh_asked.set()

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._refresh_asked.wait(), timeout=min(self.resync, 1.0))
            reconnects = int(self.client.nc.stats.get("reconnects", 0))
            due = time.monotonic() - self._fetched_at >= self.resync
            if not (self._refresh_asked.is_set() or reconnects != self._reconnects or due or self._stale):
                continue
            # Events arriving together cost one refresh.
            await asyncio.sleep(self.debounce)
            self._refresh_asked.clear()
            self._reconnects = reconnects
            try:
                await self._refresh()
            except Exception as e:
                self._stale = True
                if self._on_error is not None:
                    self._on_error(e)

    async def _refresh(self) -> None:
        # Never move back in time: a lagging replica must reach the newest revision seen.
        entries: dict[str, CapabilityEntry] = {}
        revision = self._revision
        async for page in self.client.capabilities_pages(min_revision=self._revision or None):
            entries.update((entry.name, entry) for entry in page.capabilities)
            revision = max(revision, page.revision)
        self._entries = entries
        self._revision = revision
        self._fetched_at = time.monotonic()
        self._stale = False
        self.refreshes += 1
