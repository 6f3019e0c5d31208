"""Request/reply client of the registry API (PROTOCOL.md sections 2, 10.3, 11, 12).

Each query sends the protocol's body and returns its reply as a model, or raises the typed error
of the reply (errors.py). Paged lists have ``*_all`` async iterators that follow ``next_cursor``,
each page asking for at least the revision of the page before.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import nats.errors
from nats.aio.client import Client as NatsClient
from pydantic import BaseModel

from .call import CallResult, call_capability
from .deprecation import DeprecationOps
from .errors import InvalidRequestError, RegistryTimeoutError, RegistryUnreachableError, decode_reply
from .ids import AGENT_TYPE_RE, CAPABILITY_RE, INSTANCE_ID_RE, SCHEMA_NAME_RE, TENANT_RE, check_token
from .models import AgentKind, AgentSpec, AgentStatus, InstanceStatus, JsonSchema
from .operator import request_body as _body
from .replies import (
    AgentView,
    ApprovalReply,
    CapabilitiesReply,
    CapabilityEntry,
    CardReply,
    CheckReply,
    DeregisterReply,
    DiscoveredAgent,
    DiscoverReply,
    FindReply,
    GetReply,
    GraphReply,
    HeartbeatReply,
    HistoryEvent,
    HistoryReply,
    ListReply,
    LookupReply,
    Paged,
    PendingReply,
    Provider,
    RegisterReply,
    RouteReply,
    SchemaPutReply,
    SchemaReply,
    SchemasReply,
    SchemaSummary,
    SearchReply,
    TenantTrust,
    ToolspecReply,
    TrustRootsReply,
)

R = TypeVar("R", bound=BaseModel)
P = TypeVar("P", bound=Paged)

Statuses = list[AgentStatus]
StrList = list[str]

DEFAULT_TIMEOUT = 5.0
NO_AUDIT_MIRROR = "no audit mirror is answering (start `agent-registry audit`, or `serve` with DATABASE_URL)"


def _pending_body(
    tenant: str | None, shared_only: bool, state: str | None, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    if tenant is not None and shared_only:
        raise InvalidRequestError("pending: name a tenant or ask for shared agents only, not both")
    body = _body(state=state, limit=limit, cursor=cursor)
    if tenant is not None:
        body["tenant"] = check_token("tenant", tenant, TENANT_RE)
    elif shared_only:
        body["tenant"] = None  # null on the wire: the agents no tenant owns
    return body


def request_failure(error: Exception, subject: str, timeout: float, nobody: str) -> Exception:
    """What nats-py raised, as this client's error (anything unknown passes through)."""
    if isinstance(error, nats.errors.NoRespondersError):
        return RegistryUnreachableError(subject, nobody)
    if isinstance(error, nats.errors.TimeoutError):
        return RegistryTimeoutError(subject, timeout)
    if isinstance(error, nats.errors.ConnectionClosedError):
        return RegistryUnreachableError(subject, "the NATS connection is closed")
    if isinstance(error, nats.errors.ConnectionDrainingError):
        return RegistryUnreachableError(subject, "the NATS connection is draining")
    return error


class RegistryClient(DeprecationOps):
    """Queries and writes of the registry over one NATS connection.

    ``tenant`` sends queries to ``<prefix>.tenant.<tenant>.<op>`` (shared agents plus the tenant's)
    and writes to the tenant's write subjects. Every query takes ``min_revision`` (read your own
    writes: pass a write reply's ``revision``) and ``timeout`` in seconds.
    """

    def __init__(
        self,
        nc: NatsClient,
        *,
        prefix: str = "registry",
        tenant: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        query_retries: int = 1,
    ) -> None:
        self.nc = nc
        self.prefix = prefix
        self.tenant = None if tenant is None else check_token("tenant", tenant, TENANT_RE)
        self.timeout = timeout
        self.query_retries = query_retries
        self._root = f"{prefix}.tenant.{tenant}" if tenant else prefix

    # ---- transport ----

    async def request(
        self, subject: str, body: Mapping[str, Any], timeout: float | None = None, *, nobody: str | None = None
    ) -> Any:
        """Sends a JSON body and returns the decoded reply; the one place that talks to NATS."""
        wait = timeout if timeout is not None else self.timeout
        try:
            msg = await self.nc.request(subject, json.dumps(body).encode(), timeout=wait)
        except Exception as e:
            raise request_failure(e, subject, wait, nobody or "no registry is listening") from e
        return decode_reply(msg.headers, msg.data)

    async def _query(
        self,
        op: str,
        body: dict[str, Any],
        model: type[R],
        min_revision: int | None,
        timeout: float | None,
        *,
        root: str | None = None,
    ) -> R:
        if min_revision is not None:
            body = {**body, "min_revision": min_revision}
        subject = f"{root or self._root}.{op}"
        attempt = 0
        while True:
            try:
                return model.model_validate(await self.request(subject, body, timeout))
            except RegistryTimeoutError:
                # Queries are reads: sending again covers a replica that died before answering.
                if attempt >= self.query_retries:
                    raise
                attempt += 1

    async def _pages(
        self,
        op: str,
        body: dict[str, Any],
        model: type[P],
        min_revision: int | None,
        timeout: float | None,
        *,
        root: str | None = None,
    ) -> AsyncIterator[P]:
        cursor = body.get("cursor")
        while True:
            # Only the cursor changes; a null the body means (pending's shared agents) stays.
            page_body = {**{k: v for k, v in body.items() if k != "cursor"}, **_body(cursor=cursor)}
            page = await self._query(op, page_body, model, min_revision, timeout, root=root)
            yield page
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
            # A later page never comes from an older view than the page before.
            min_revision = max(min_revision or 0, page.revision)

    # ---- queries ----

    async def lookup(
        self,
        capability: str,
        *,
        status: Statuses | None = None,
        version: str | None = None,
        kind: AgentKind | None = None,
        read_only: bool | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> LookupReply:
        """Providers of a capability, best first; an empty list when none."""
        body = _body(
            capability=capability,
            status=status,
            version=version,
            kind=kind,
            read_only=read_only,
            limit=limit,
            cursor=cursor,
        )
        return await self._query("lookup", body, LookupReply, min_revision, timeout)

    async def lookup_all(
        self,
        capability: str,
        *,
        status: Statuses | None = None,
        version: str | None = None,
        kind: AgentKind | None = None,
        read_only: bool | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[Provider]:
        """Every provider of a capability, best first, page after page."""
        body = _body(capability=capability, status=status, version=version, kind=kind, read_only=read_only)
        async for page in self._pages("lookup", body, LookupReply, min_revision, timeout):
            for provider in page.providers:
                yield provider

    async def get(
        self,
        agent_type: str,
        *,
        instances_limit: int | None = None,
        instances_cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> GetReply:
        """One agent type; NotFoundError when unknown."""
        body = _body(agent_type=agent_type, instances_limit=instances_limit, instances_cursor=instances_cursor)
        return await self._query("get", body, GetReply, min_revision, timeout)

    async def list(
        self,
        *,
        status: Statuses | None = None,
        owner_team: str | None = None,
        tags: dict[str, str] | None = None,
        capability: str | None = None,
        kind: AgentKind | None = None,
        agent_types: Sequence[str] | None = None,
        instances_limit: int | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> ListReply:
        """One page of agents, ordered by agent_type.

        ``agent_types`` (protocol v1.2, 1 to 100 of them) lists those agent types only, a batch
        of ``get`` in one request; ``instances_limit`` (v1.2) bounds each view's instances. A
        v1.1 registry ignores both and lists its fleet.
        """
        body = _body(
            status=status,
            owner_team=owner_team,
            tags=tags,
            capability=capability,
            kind=kind,
            agent_types=list(agent_types) if agent_types is not None else None,
            instances_limit=instances_limit,
            limit=limit,
            cursor=cursor,
        )
        return await self._query("list", body, ListReply, min_revision, timeout)

    async def list_all(
        self,
        *,
        status: Statuses | None = None,
        owner_team: str | None = None,
        tags: dict[str, str] | None = None,
        capability: str | None = None,
        kind: AgentKind | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AgentView]:
        """Every agent of ``list``, fetched a page at a time as the loop goes on."""
        body = _body(status=status, owner_team=owner_team, tags=tags, capability=capability, kind=kind, limit=limit)
        async for page in self._pages("list", body, ListReply, min_revision, timeout):
            for agent in page.agents:
                yield agent

    async def capabilities(
        self,
        *,
        status: Statuses | None = None,
        schemas: bool | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> CapabilitiesReply:
        """One page of the capability projection a coordinator plans with."""
        body = _body(status=status, schemas=schemas, limit=limit, cursor=cursor)
        return await self._query("capabilities", body, CapabilitiesReply, min_revision, timeout)

    async def capabilities_pages(
        self,
        *,
        status: Statuses | None = None,
        schemas: bool | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[CapabilitiesReply]:
        """Every page of the projection, each with its revision."""
        body = _body(status=status, schemas=schemas, limit=limit)
        async for page in self._pages("capabilities", body, CapabilitiesReply, min_revision, timeout):
            yield page

    async def capabilities_all(
        self,
        *,
        status: Statuses | None = None,
        schemas: bool | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[CapabilityEntry]:
        body = _body(status=status, schemas=schemas, limit=limit)
        async for page in self._pages("capabilities", body, CapabilitiesReply, min_revision, timeout):
            for entry in page.capabilities:
                yield entry

    async def route(
        self,
        *,
        skill: str | None = None,
        tags: StrList | None = None,
        preferred_runtime: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> RouteReply:
        """The best ready agent for a skill, tags and runtime; NoRouteError when none scores."""
        body = _body(skill=skill, tags=tags, preferred_runtime=preferred_runtime)
        return await self._query("route", body, RouteReply, min_revision, timeout)

    async def find(
        self,
        *,
        skill: str | None = None,
        tag: str | None = None,
        name: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> FindReply:
        """Agents by exactly one of skill, tag or name (the registry refuses any other mix)."""
        body = _body(skill=skill, tag=tag, name=name, limit=limit, cursor=cursor)
        return await self._query("find", body, FindReply, min_revision, timeout)

    async def find_all(
        self,
        *,
        skill: str | None = None,
        tag: str | None = None,
        name: str | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AgentView]:
        body = _body(skill=skill, tag=tag, name=name, limit=limit)
        async for page in self._pages("find", body, FindReply, min_revision, timeout):
            for agent in page.agents:
                yield agent

    async def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        kind: AgentKind | None = None,
        read_only: bool | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> SearchReply:
        """Keyword relevance over capability names, descriptions, tags, examples and agent descriptions."""
        body = _body(query=query, limit=limit, kind=kind, read_only=read_only)
        return await self._query("search", body, SearchReply, min_revision, timeout)

    async def discover(
        self,
        *,
        capability: str | None = None,
        kind: AgentKind | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> DiscoverReply:
        """Agents with their capabilities and ``ready``/``busy``/``unavailable``."""
        body = _body(capability=capability, kind=kind, limit=limit, cursor=cursor)
        return await self._query("discover", body, DiscoverReply, min_revision, timeout)

    async def discover_all(
        self,
        *,
        capability: str | None = None,
        kind: AgentKind | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[DiscoveredAgent]:
        body = _body(capability=capability, kind=kind, limit=limit)
        async for page in self._pages("discover", body, DiscoverReply, min_revision, timeout):
            for agent in page.agents:
                yield agent

    async def card(
        self,
        agent_type: str,
        *,
        a2a_version: Literal["1.0", "0.3"] | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> CardReply:
        """The agent as an A2A Agent Card (v1.0 unless ``a2a_version="0.3"``)."""
        body = _body(agent_type=check_token("agent_type", agent_type, AGENT_TYPE_RE), a2a_version=a2a_version)
        return await self._query("card", body, CardReply, min_revision, timeout)

    async def toolspec(
        self, agent_type: str, *, min_revision: int | None = None, timeout: float | None = None
    ) -> ToolspecReply:
        """The agent's capabilities as MCP tools (the result of ``tools/list``)."""
        body = {"agent_type": check_token("agent_type", agent_type, AGENT_TYPE_RE)}
        return await self._query("toolspec", body, ToolspecReply, min_revision, timeout)

    async def check(
        self,
        capability: str,
        payload: Any,
        *,
        agent_type: str | None = None,
        direction: Literal["input", "output"] | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> CheckReply:
        """The payload against the capability's input (or output) schema; a broken payload is an answer."""
        body = _body(capability=capability, agent_type=agent_type, direction=direction)
        body["payload"] = payload
        return await self._query("check", body, CheckReply, min_revision, timeout)

    async def graph(
        self,
        *,
        agent_type: str | None = None,
        direction: Literal["dependencies", "dependents"] | None = None,
        depth: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> GraphReply:
        """The dependency graph of one agent type (or of the fleet), with each node's state and the problems."""
        if agent_type is not None:
            check_token("agent_type", agent_type, AGENT_TYPE_RE)
        body = _body(agent_type=agent_type, direction=direction, depth=depth)
        return await self._query("graph", body, GraphReply, min_revision, timeout)

    async def sbom(
        self,
        *,
        format: Literal["cyclonedx", "spdx"] | None = None,
        agent_type: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """The fleet's (or one agent's) SBOM: the CycloneDX 1.6 or SPDX 2.3 document itself."""
        if agent_type is not None:
            check_token("agent_type", agent_type, AGENT_TYPE_RE)
        reply = await self.request(f"{self._root}.sbom", _body(format=format, agent_type=agent_type), timeout)
        if not isinstance(reply, dict):
            raise TypeError("the sbom reply is not a JSON object")
        return reply

    async def schemas(
        self,
        *,
        name: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> SchemasReply:
        """One page of the stored schema versions, by name then version."""
        body = _body(name=name, limit=limit, cursor=cursor)
        return await self._query("schemas", body, SchemasReply, min_revision, timeout)

    async def schemas_all(
        self, *, name: str | None = None, min_revision: int | None = None, timeout: float | None = None
    ) -> AsyncIterator[SchemaSummary]:
        async for page in self._pages("schemas", _body(name=name), SchemasReply, min_revision, timeout):
            for schema in page.schemas:
                yield schema

    async def schema(
        self, name: str, version: str, *, min_revision: int | None = None, timeout: float | None = None
    ) -> SchemaReply:
        """One stored schema (refs kept) with the agent types that use it; NotFoundError when not stored."""
        body = {"name": check_token("schema name", name, SCHEMA_NAME_RE), "version": version}
        return await self._query("schema", body, SchemaReply, min_revision, timeout)

    async def history(
        self,
        *,
        agent_type: str | None = None,
        capability: str | None = None,
        types: StrList | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        timeout: float | None = None,
    ) -> HistoryReply:
        """One page of stored events from the audit mirror, oldest first (PROTOCOL.md section 12)."""
        if agent_type is not None:
            check_token("agent_type", agent_type, AGENT_TYPE_RE)
        if capability is not None:
            check_token("capability", capability, CAPABILITY_RE)
        body = _body(
            agent_type=agent_type,
            capability=capability,
            types=types,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
        )
        reply = await self.request(f"{self._root}.history", body, timeout, nobody=NO_AUDIT_MIRROR)
        return HistoryReply.model_validate(reply)

    async def history_all(
        self,
        *,
        agent_type: str | None = None,
        capability: str | None = None,
        types: StrList | None = None,
        since: str | None = None,
        until: str | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[HistoryEvent]:
        cursor: str | None = None
        while True:
            page = await self.history(
                agent_type=agent_type,
                capability=capability,
                types=types,
                since=since,
                until=until,
                cursor=cursor,
                timeout=timeout,
            )
            for event in page.events:
                yield event
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def call(
        self,
        capability: str,
        payload: Any,
        *,
        agent_type: str | None = None,
        timeout: float = 30.0,
        check_reply: bool = True,
        min_revision: int | None = None,
    ) -> CallResult:
        """Sends a task to the agent ``route`` picks (or ``agent_type``) and returns its reply.

        The registry checks the payload against that agent's input schema first, so a payload that
        breaks it is never sent (InvalidPayloadError, ``direction="input"``); the reply is checked
        against the output schema the same way unless ``check_reply=False``. ``min_revision``
        routes and checks on a view at that store revision or later: pass the revision of a
        registration just seen, so a replica that has not applied it yet cannot answer no_route.
        """
        check_token("capability", capability, CAPABILITY_RE)
        if agent_type is not None:
            check_token("agent_type", agent_type, AGENT_TYPE_RE)
        return await call_capability(self, capability, payload, agent_type, timeout, check_reply, min_revision)

    # ---- the approval gate (protocol v1.2, docs/trust.md): operators only, whatever this client's tenant ----

    async def approve(
        self,
        agent_type: str,
        *,
        by: str,
        version: str | None = None,
        revision: int | None = None,
        reason: str | None = None,
        timeout: float | None = None,
    ) -> ApprovalReply:
        """Approves the stored spec of an agent type (pending, or rejected before): it becomes routable.

        ``by`` is who decides (the registry records the operator's word). ``version`` and
        ``revision`` (the spec record's, as ``get`` or ``pending`` showed it) name what was
        reviewed: another stored spec is ConflictError, so a spec replaced meanwhile is never
        approved unseen; so is a decision that changes nothing. NotFoundError for an unknown type.
        """
        body = _body(by=by, version=version, revision=revision, reason=reason)
        token = ("agent_type", agent_type, AGENT_TYPE_RE)
        return await self._operator_call("approval", "approve", token, body, ApprovalReply, timeout)

    async def reject(
        self,
        agent_type: str,
        *,
        by: str,
        reason: str,
        version: str | None = None,
        revision: int | None = None,
        timeout: float | None = None,
    ) -> ApprovalReply:
        """Rejects the stored spec of an agent type, saying why; an approved one is withdrawn from routing."""
        body = _body(by=by, reason=reason, version=version, revision=revision)
        token = ("agent_type", agent_type, AGENT_TYPE_RE)
        return await self._operator_call("approval", "reject", token, body, ApprovalReply, timeout)

    async def pending(
        self,
        *,
        tenant: str | None = None,
        shared_only: bool = False,
        state: Literal["pending", "rejected", "withheld"] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> PendingReply:
        """One page of the specs waiting for a decision (or, with ``state="rejected"``, rejected), by agent_type.

        Every tenant's unless ``tenant`` names one; ``shared_only=True`` lists the shared agents' only.
        """
        body = _pending_body(tenant, shared_only, state, limit, cursor)
        return await self._query("approval.pending", body, PendingReply, min_revision, timeout, root=self.prefix)

    async def pending_all(
        self,
        *,
        tenant: str | None = None,
        shared_only: bool = False,
        state: Literal["pending", "rejected", "withheld"] | None = None,
        limit: int | None = None,
        min_revision: int | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[AgentView]:
        """Every spec of ``pending``, fetched a page at a time as the loop goes on."""
        body = _pending_body(tenant, shared_only, state, limit, None)
        async for page in self._pages("approval.pending", body, PendingReply, min_revision, timeout, root=self.prefix):
            for agent in page.agents:
                yield agent

    # ---- a tenant's trust roots in the bucket (protocol v1.2, docs/trust.md): operators only ----

    async def set_trust_roots(
        self,
        tenant: str,
        trust: TenantTrust | Mapping[str, Any],
        *,
        by: str | None = None,
        revision: int | None = None,
        timeout: float | None = None,
    ) -> TrustRootsReply:
        """Sets (or replaces) a tenant's trust roots in the registry's bucket, which every replica follows.

        ``trust`` is the tenant's entry as the trust file writes one (a model, or a mapping sent as
        is: the registry is the judge), keys inline only: a ``jwks_file``, a ``jwks_url``, a private
        key or a grant without its key raises InvalidRequestError and nothing is stored.
        ``revision`` makes it a compare-and-set on the entry read (0: none stored yet): another
        stored revision raises ConflictError, as does a tenant the trust file names (the file wins).
        """
        entry = trust.model_dump(mode="json", exclude_none=True) if isinstance(trust, TenantTrust) else dict(trust)
        body = _body(trust=entry, by=by, revision=revision)
        tenant_token = ("tenant", tenant, TENANT_RE)
        return await self._operator_call("trust", "set", tenant_token, body, TrustRootsReply, timeout)

    async def get_trust_roots(self, tenant: str, *, timeout: float | None = None) -> TrustRootsReply:
        """A tenant's trust roots as the bucket holds them, and where the roots in force come from."""
        tenant_token = ("tenant", tenant, TENANT_RE)
        return await self._operator_call("trust", "get", tenant_token, {}, TrustRootsReply, timeout)

    async def delete_trust_roots(
        self, tenant: str, *, by: str | None = None, revision: int | None = None, timeout: float | None = None
    ) -> TrustRootsReply:
        """Deletes a tenant's trust roots from the bucket: NotFoundError when none are stored,
        ConflictError when ``revision`` is not the stored entry's."""
        body = _body(by=by, revision=revision)
        tenant_token = ("tenant", tenant, TENANT_RE)
        return await self._operator_call("trust", "delete", tenant_token, body, TrustRootsReply, timeout)

    # ---- writes ----

    async def put_schema(
        self,
        name: str,
        version: str,
        schema: JsonSchema,
        *,
        description: str | None = None,
        timeout: float | None = None,
    ) -> SchemaPutReply:
        """Stores one version of a named schema, usable as ``{"$ref": "#<name>:<version>"}``."""
        subject = f"{self.prefix}.schema.put.{check_token('schema name', name, SCHEMA_NAME_RE)}"
        body = _body(version=version, schema=schema, description=description)
        return SchemaPutReply.model_validate(await self.request(subject, body, timeout))

    async def register(
        self,
        spec: AgentSpec | Mapping[str, Any] | None = None,
        *,
        agent_type: str | None = None,
        a2a_card: Mapping[str, Any] | None = None,
        mcp_toolspec: Mapping[str, Any] | None = None,
        mcp_server: Mapping[str, Any] | None = None,
        instance_id: str | None = None,
        heartbeat_interval_ms: int | None = None,
        status: Literal["registered", "ready"] | None = None,
        metadata: Mapping[str, str] | None = None,
        replace: bool | None = None,
        extra: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> RegisterReply:
        """Registers one instance with an AgentSpec, an A2A card, an MCP tool spec or a server.json.

        A spec may be a model or a plain mapping (sent as is: the registry is the judge). A card,
        tool spec or server.json needs ``agent_type``; ``extra`` carries the fields beside it
        (``nats_subject``, ``description``, ``version``, ``owner_team``, ``strict``, ``kind``, ...).

        ``mcp_server`` (v1.2) is the ``server.json`` an MCP server publishes to the MCP Registry:
        its description, version, title and first HTTP remote fill the spec. Its tools go beside
        it as ``mcp_toolspec`` (the ``tools/list`` result) or inside it, under
        ``_meta["io.modelcontextprotocol.registry/publisher-provided"]["tools"]``; never both.
        Beside it ``extra`` may carry ``kind``, ``owner_team``, ``nats_subject``,
        ``consumer_group`` and ``tenant_scope``; ``description``, ``version`` and ``url`` are the
        document's own, and the registry refuses them there.
        """
        body: dict[str, Any] = dict(extra or {})
        if spec is not None:
            wire = spec.to_wire() if isinstance(spec, AgentSpec) else dict(spec)
            body["spec"] = wire
            agent_type = agent_type or wire.get("agent_type")
        if a2a_card is not None:
            body["a2a_card"] = dict(a2a_card)
        if mcp_toolspec is not None:
            body["mcp_toolspec"] = dict(mcp_toolspec)
        if mcp_server is not None:
            body["mcp_server"] = dict(mcp_server)
        subject_type = check_token("agent_type", str(agent_type), AGENT_TYPE_RE)
        if instance_id is not None:
            check_token("instance_id", instance_id, INSTANCE_ID_RE)
        body.update(
            _body(
                instance_id=instance_id,
                heartbeat_interval_ms=heartbeat_interval_ms,
                status=status,
                metadata=None if metadata is None else dict(metadata),
                replace=replace,
            )
        )
        reply = await self.request(f"{self._root}.register.{subject_type}", body, timeout)
        return RegisterReply.model_validate(reply)

    async def heartbeat(
        self,
        agent_type: str,
        instance_id: str,
        *,
        status: InstanceStatus | None = None,
        active_tasks: int | None = None,
        timeout: float | None = None,
    ) -> HeartbeatReply:
        subject = (
            f"{self._root}.heartbeat.{check_token('agent_type', agent_type, AGENT_TYPE_RE)}"
            f".{check_token('instance_id', instance_id, INSTANCE_ID_RE)}"
        )
        reply = await self.request(subject, _body(status=status, active_tasks=active_tasks), timeout)
        return HeartbeatReply.model_validate(reply)

    async def deregister(
        self, agent_type: str, instance_id: str, *, reason: str | None = None, timeout: float | None = None
    ) -> DeregisterReply:
        subject = (
            f"{self._root}.deregister.{check_token('agent_type', agent_type, AGENT_TYPE_RE)}"
            f".{check_token('instance_id', instance_id, INSTANCE_ID_RE)}"
        )
        return DeregisterReply.model_validate(await self.request(subject, _body(reason=reason), timeout))

    async def deregister_type(
        self, agent_type: str, *, reason: str | None = None, timeout: float | None = None
    ) -> DeregisterReply:
        """Operator action: removes every instance of an agent type."""
        subject = f"{self._root}.deregister.{check_token('agent_type', agent_type, AGENT_TYPE_RE)}"
        return DeregisterReply.model_validate(await self.request(subject, _body(reason=reason), timeout))
