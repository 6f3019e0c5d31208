"""A NATS connection with the defaults a long-running agent or coordinator needs (NATS-NOTES section 3):
reconnect forever, a ping every 20 s so a dead link is noticed in under a minute, one second between
reconnect attempts. The same environment variables as the service and the TypeScript SDK."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import nats
from nats.aio.client import Client as NatsClient

DEFAULT_NATS_URL = "nats://127.0.0.1:4222"


async def connect(
    servers: str | list[str] | None = None, *, env: Mapping[str, str] | None = None, **options: Any
) -> NatsClient:
    """Connects to ``servers`` (default ``NATS_URL``, else ``nats://127.0.0.1:4222``).

    Credentials come from ``NATS_USER``/``NATS_PASSWORD``, ``NATS_TOKEN``, ``NATS_CREDS``,
    ``NATS_NKEY_SEED_FILE`` and ``NATS_INBOX_PREFIX`` when not given; ``options`` go to ``nats.connect``.
    """
    env = os.environ if env is None else env
    url = servers if servers is not None else env.get("NATS_URL") or DEFAULT_NATS_URL
    settings: dict[str, Any] = {
        "servers": url.split(",") if isinstance(url, str) else url,
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 1,
        "ping_interval": 20,
        "max_outstanding_pings": 2,
    }
    if env.get("NATS_USER"):
        settings["user"] = env["NATS_USER"]
        settings["password"] = env.get("NATS_PASSWORD", "")
    if env.get("NATS_TOKEN"):
        settings["token"] = env["NATS_TOKEN"]
    if env.get("NATS_CREDS"):
        settings["user_credentials"] = env["NATS_CREDS"]
    if env.get("NATS_NKEY_SEED_FILE"):
        settings["nkeys_seed"] = env["NATS_NKEY_SEED_FILE"]
    if env.get("NATS_INBOX_PREFIX"):
        settings["inbox_prefix"] = env["NATS_INBOX_PREFIX"]
    settings.update(options)
    return await nats.connect(**settings)
