"""Deprecation of an agent type (protocol v1.2, docs/trust.md "Deprecation"): operators only.

A deprecated agent type stays routable; every answer that shows it carries ``deprecated`` (a
:class:`~agent_registry.replies.DeprecationView`) with who, why and the successor to move to.
The operations live on ``registry.approval.deprecate.<type>`` and ``.undeprecate.<type>``, under no
tenant whatever the client's; :class:`DeprecationOps` gives :class:`~agent_registry.RegistryClient`
its ``deprecate`` and ``undeprecate``.
"""

from __future__ import annotations

from .ids import AGENT_TYPE_RE, check_token
from .operator import OperatorCalls, request_body
from .replies import DeprecationView, Reply

DEPRECATION_EVENTS = ("registry.agent.deprecated", "registry.agent.undeprecated")
"""``watch(types=DEPRECATION_EVENTS)``; each event's ``data`` reads as :class:`DeprecationData`."""


class DeprecationReply(Reply):
    """The answer to ``deprecate`` and ``undeprecate``: the deprecation once written, None once withdrawn."""

    agent_type: str
    version: str
    tenant_scope: str | None = None
    deprecated: DeprecationView | None = None
    revision: int


class DeprecationData(Reply):
    """The ``data`` of ``registry.agent.deprecated`` and ``.undeprecated``: who, why, and the successor."""

    agent_type: str
    version: str
    tenant_scope: str | None = None
    deprecated: bool
    by: str
    reason: str | None = None
    successor: str | None = None
    revision: int


class DeprecationOps(OperatorCalls):
    """``deprecate`` and ``undeprecate`` for a client that has ``prefix`` and ``request``."""

    async def deprecate(
        self,
        agent_type: str,
        *,
        by: str,
        reason: str | None = None,
        successor: str | None = None,
        version: str | None = None,
        revision: int | None = None,
        timeout: float | None = None,
    ) -> DeprecationReply:
        """Deprecates an agent type, saying why and what to use instead; it stays routable.

        ``version`` and ``revision`` name what was reviewed: another stored spec is ConflictError,
        and so is the same deprecation again; other words replace the first ones.
        """
        if successor is not None:
            check_token("successor", successor, AGENT_TYPE_RE)
        body = request_body(by=by, reason=reason, successor=successor, version=version, revision=revision)
        token = ("agent_type", agent_type, AGENT_TYPE_RE)
        return await self._operator_call("approval", "deprecate", token, body, DeprecationReply, timeout)

    async def undeprecate(
        self,
        agent_type: str,
        *,
        by: str,
        reason: str | None = None,
        version: str | None = None,
        revision: int | None = None,
        timeout: float | None = None,
    ) -> DeprecationReply:
        """Withdraws the deprecation; ConflictError when the agent type is not deprecated."""
        body = request_body(by=by, reason=reason, version=version, revision=revision)
        token = ("agent_type", agent_type, AGENT_TYPE_RE)
        return await self._operator_call("approval", "undeprecate", token, body, DeprecationReply, timeout)
