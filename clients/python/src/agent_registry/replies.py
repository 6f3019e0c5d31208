"""Reply bodies of PROTOCOL.md section 2 and docs/protocol.md section 8 as Pydantic models.

Replies keep fields this client does not know (``extra="allow"``): a newer registry may add some.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .models import AgentKind, AgentStatus, InstanceStatus, JsonSchema, ModelProvider, ToolAnnotations


class Reply(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


ApprovalState = Literal["pending", "approved", "rejected"]


class ApprovalView(Reply):
    """Where a stored spec stands in its tenant's approval gate (protocol v1.2, docs/trust.md).

    ``by``, ``at`` and ``reason`` once an operator decided; only ``approved`` is routable.
    """

    state: ApprovalState
    by: str | None = None
    at: str | None = None
    reason: str | None = None


class DeprecationView(Reply):
    """An operator's deprecation of an agent type (protocol v1.2, docs/trust.md "Deprecation").

    A warning, not a removal: the agent type is still routed; ``successor`` is what to use instead.
    """

    by: str
    at: str
    reason: str | None = None
    successor: str | None = None


class RegisterReply(Reply):
    agent_type: str
    version: str
    instance_id: str
    status: InstanceStatus
    revision: int
    heartbeat_subject: str
    heartbeat_interval_ms: int
    evict_after_ms: int
    warnings: list[str] = Field(default_factory=list)
    a2a_version: Literal["0.3", "1.0"] | None = None
    approval: ApprovalView | None = None
    """v1.2: the stored spec's approval when its tenant is under policy manual; None under auto."""


class HeartbeatReply(Reply):
    status: InstanceStatus
    revision: int
    last_heartbeat: str | None = None


class DeregisterReply(Reply):
    agent_type: str
    instance_id: str | None
    agent_removed: bool
    revision: int
    instances: list[str] | None = None


class InstanceView(Reply):
    instance_id: str
    version: str
    status: InstanceStatus
    registered_at: str
    last_heartbeat: str
    heartbeat_interval_ms: int
    active_tasks: int
    metadata: dict[str, str] = Field(default_factory=dict)


class CapabilityView(Reply):
    name: str
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema
    confidence_hint: float | None = None
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    title: str | None = None
    annotations: ToolAnnotations | None = None
    effective_annotations: ToolAnnotations | None = None


class AgentView(Reply):
    """The stored AgentSpec plus liveness: status, times, instances."""

    agent_type: str
    version: str
    description: str
    owner_team: str
    capabilities: list[CapabilityView]
    nats_subject: str
    consumer_group: str
    kind: AgentKind = "agent"
    display_name: str | None = None
    url: str | None = None
    tenant_scope: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    weight: float = 1
    max_concurrent_tasks: int = 10
    status: AgentStatus
    registered_at: str
    updated_at: str | None = None
    """v1.2: when the stored spec record last changed; None from a registry before v1.2."""
    last_heartbeat: str | None = None
    deregistered_at: str | None = None
    revision: int
    instance_count: int = 0
    instances: list[InstanceView] = Field(default_factory=list)
    instances_next_cursor: str | None = None
    approval: ApprovalView | None = None
    """v1.2: set once the spec was stored under policy manual; None means approved by policy ``auto``."""
    deprecated: DeprecationView | None = None
    """v1.2: set while an operator has deprecated the agent type (it is still routed)."""

    @property
    def routable(self) -> bool:
        """Whether routing queries may answer with this agent: its spec is approved (by policy or an operator)."""
        return self.approval is None or self.approval.state == "approved"


class Provider(Reply):
    agent_type: str
    kind: AgentKind = "agent"
    version: str
    nats_subject: str
    consumer_group: str
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema
    confidence_hint: float | None = None
    effective_annotations: ToolAnnotations | None = None
    status: AgentStatus
    ready_instances: int
    tenant_scope: str | None = None
    deprecated: DeprecationView | None = None


class Paged(Reply):
    next_cursor: str | None = None
    revision: int


class LookupReply(Paged):
    capability: str
    providers: list[Provider]


class GetReply(Reply):
    agent: AgentView
    revision: int


class ListReply(Paged):
    agents: list[AgentView]


class CapabilityEntry(Reply):
    name: str
    description: str
    providers: list[str]
    input_schema: JsonSchema | None = None
    output_schema: JsonSchema | None = None


class CapabilitiesReply(Paged):
    capabilities: list[CapabilityEntry]


class RouteCandidate(Reply):
    agent_type: str
    score: float
    deprecated: DeprecationView | None = None


class RouteReply(Reply):
    agent_type: str
    nats_subject: str
    consumer_group: str
    version: str
    runtime: str | None = None
    score: float
    candidates: list[RouteCandidate]
    revision: int
    deprecated: DeprecationView | None = None
    """v1.2: set when the chosen agent type is deprecated (a tie goes to one that is not)."""


class FindReply(Paged):
    agents: list[AgentView]


class SearchResult(Reply):
    agent_type: str
    capability: str
    score: float
    deprecated: DeprecationView | None = None


class SearchReply(Reply):
    results: list[SearchResult]
    revision: int


class DiscoveredAgent(Reply):
    id: str
    capabilities: list[str]
    status: Literal["ready", "busy", "unavailable"]
    providers: list[ModelProvider] | None = None
    deprecated: DeprecationView | None = None


class DiscoverReply(Paged):
    agents: list[DiscoveredAgent]


class CardReply(Reply):
    card: dict[str, Any]
    revision: int


class ToolspecReply(Reply):
    tools: list[dict[str, Any]]
    revision: int


class CheckIssue(Reply):
    path: str
    message: str


class CheckReply(Reply):
    valid: bool
    errors: list[CheckIssue]
    agent_type: str
    version: str
    revision: int


class GraphNode(Reply):
    id: str
    kind: str
    name: str
    version: str
    state: str


class GraphEdge(Reply):
    from_: str = Field(alias="from")
    to: str
    capability: str | None = None


class GraphProblem(Reply):
    severity: Literal["error", "warning"]
    code: str
    message: str
    path: str


class GraphReply(Reply):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    problems: list[GraphProblem]
    revision: int


class SchemaPutReply(Reply):
    name: str
    version: str
    created: bool = True
    revision: int


class SchemaSummary(Reply):
    name: str
    version: str
    description: str = ""


class SchemasReply(Paged):
    schemas: list[SchemaSummary]


class SchemaReply(Reply):
    name: str
    version: str
    schema_: JsonSchema = Field(alias="schema")
    description: str = ""
    used_by: list[str]
    used_by_count: int = 0
    revision: int


class ApprovalReply(Reply):
    """The answer to ``approve`` and ``reject``: the stored spec's approval once the decision is written."""

    agent_type: str
    version: str
    tenant_scope: str | None = None
    approval: ApprovalView
    revision: int


class PendingReply(Paged):
    """One page of ``registry.approval.pending``: specs waiting for a decision (or rejected), by agent_type."""

    agents: list[AgentView]


class ApprovalData(Reply):
    """The ``data`` of the events ``registry.agent.pending``, ``.approved`` and ``.rejected`` (v1.2).

    ``by`` and ``reason`` are None when there are none (a pending spec, an approval without a reason).
    """

    agent_type: str
    version: str
    tenant_scope: str | None = None
    state: ApprovalState
    by: str | None = None
    reason: str | None = None
    revision: int


TrustMode = Literal["off", "verify-if-present", "require"]
TrustSource = Literal["file", "bucket", "none"]


class TrustSigner(Reply):
    """One grant of a tenant's trust roots: key ``kid`` may sign for ``agent_types`` (``*`` patterns)
    on behalf of ``publisher``, optionally from ``not_before`` until ``not_after`` (ISO 8601)."""

    kid: str
    publisher: str
    agent_types: list[str]
    not_before: str | None = None
    not_after: str | None = None


class TrustJwks(Reply):
    """A JWK set inline: public keys only, each with ``kid`` and ``alg``."""

    keys: list[dict[str, Any]]


class TenantTrust(Reply):
    """A tenant's entry as the trust file and the bucket write one (protocol v1.2, docs/trust.md).

    Members left at None are not sent: the registry stores the trust file's defaults for them (mode
    ``off``, approval ``auto``, no signers), and the stored entry shows them. In the bucket the keys
    are inline only: the registry refuses ``jwks_file`` and ``jwks_url`` there.
    """

    mode: TrustMode | None = None
    approval: Literal["auto", "manual"] | None = None
    jwks: TrustJwks | None = None
    signers: list[TrustSigner] | None = None


class TrustRootsReply(Reply):
    """The answer to ``set_trust_roots``, ``get_trust_roots`` and ``delete_trust_roots`` (v1.2).

    ``trust`` is the entry the bucket holds for the tenant (None: none, or just deleted) at
    ``revision`` (None: none stored); ``by`` who set it (or deleted it). ``in_force`` is where the
    tenant's roots in force come from on the replica that answered: the trust file wins over the
    bucket for a tenant it names.
    """

    tenant: str
    trust: TenantTrust | None = None
    by: str | None = None
    revision: int | None = None
    in_force: TrustSource


class CloudEvent(Reply):
    """A registry event (PROTOCOL.md section 5): CloudEvents 1.0 JSON."""

    specversion: str
    id: str
    source: str
    type: str
    time: str
    subject: str
    datacontenttype: str = "application/json"
    data: dict[str, Any] = Field(default_factory=dict)
    # v1.2, regional mode: the home region; across regions an event is known by region and id.
    region: str | None = None


class HistoryEvent(CloudEvent):
    seq: int
    data_omitted: bool | None = None


class HistoryReply(Reply):
    events: list[HistoryEvent]
    next_cursor: str | None = None
    mirrored_seq: int
    stream_last_seq: int
