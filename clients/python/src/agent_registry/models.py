"""AgentSpec and Capability (PROTOCOL.md section 3) as Pydantic models: the field names, defaults and
limits of the service's zod schema (src/domain/spec/spec.ts), so a spec these models accept is one
the registry accepts, and one they refuse names the same path.

Unknown fields are dropped (the registry drops them too and names them in its ``warnings``).
A capability's ``input_schema``/``output_schema`` may be given as a Pydantic model class: it is
sent as that model's JSON Schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from .ids import (
    AGENT_TYPE_RE,
    CAPABILITY_MAX_LENGTH,
    CAPABILITY_RE,
    NATS_SUBJECT_RE,
    QUEUE_GROUP_RE,
    RESERVED_SUBJECT_RE,
    SEMVER_RE,
    TENANT_RE,
    UNSAFE_NAME_CHAR_RE,
)
from .schema_rules import SchemaProblem, check_schema, json_bound

JsonSchema = dict[str, Any] | bool
#: What a schema field takes as input: a JSON Schema, or a Pydantic model class sent as its JSON Schema.
SchemaLike = dict[str, Any] | bool | type[BaseModel]

SupportedPattern = Literal["coordinator_managed", "swarm_peer", "blackboard", "market_bidding"]
AgentKind = Literal["agent", "mcp_server", "tool"]
InstanceStatus = Literal["registered", "ready", "draining"]
AgentStatus = Literal["registered", "ready", "draining", "deregistered"]
MAX_WEIGHT = 1000
_COORDINATOR_MANAGED: SupportedPattern = "coordinator_managed"


def _matching(rule: Any, what: str) -> Any:
    def check(value: str) -> str:
        if rule.fullmatch(value) is None:
            raise ValueError(f"must be {what}")
        return value

    return AfterValidator(check)


def _not_reserved(value: str) -> str:
    if RESERVED_SUBJECT_RE.match(value):
        raise ValueError("must not be a NATS system subject ($...) or a reply inbox (_INBOX...)")
    return value


def _displayed(value: str) -> str:
    bad = UNSAFE_NAME_CHAR_RE.search(value)
    if bad is not None:
        raise ValueError(
            f"holds U+{ord(bad.group()):04X} at {bad.start()}: control and invisible characters are not allowed"
        )
    return value


AgentType = Annotated[str, _matching(AGENT_TYPE_RE, f"an agent_type matching {AGENT_TYPE_RE.pattern}")]
Tenant = Annotated[str, _matching(TENANT_RE, f"a tenant matching {TENANT_RE.pattern}")]
CapabilityName = Annotated[
    str,
    Field(max_length=CAPABILITY_MAX_LENGTH),
    _matching(CAPABILITY_RE, "dot-separated tokens of [A-Za-z0-9_-]"),
]
SpecVersion = Annotated[str, Field(max_length=256), _matching(SEMVER_RE, "semver X.Y.Z[-prerelease]")]
ExactVersion = Annotated[str, _matching(SEMVER_RE, "an exact semver version")]


def schema_of(value: SchemaLike) -> JsonSchema:
    """A JSON Schema as sent: a Pydantic model class becomes its ``model_json_schema()``."""
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value.model_json_schema()
    return value


class _Spec(BaseModel):
    # Strict types, as zod's: "10" is not a number, 1.5 not an integer. Unknown fields are dropped.
    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=True)


class ToolAnnotations(_Spec):
    title: Annotated[str, Field(max_length=1024)] | None = None
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None


class Capability(_Spec):
    """One capability an agent offers; ``name`` is what coordinators look up (``text.summarize``)."""

    name: CapabilityName
    description: Annotated[str, Field(max_length=8192)]
    input_schema: SchemaLike
    output_schema: SchemaLike
    confidence_hint: Annotated[float, Field(ge=0, le=1)] | None = None
    tags: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(default_factory=list, max_length=64)
    examples: list[Annotated[str, Field(max_length=4096)]] = Field(default_factory=list, max_length=64)
    title: Annotated[str, Field(max_length=1024)] | None = None
    annotations: ToolAnnotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")
    icons: list[dict[str, Any]] | None = Field(default=None, max_length=16)
    execution: dict[str, Any] | None = None
    mcp_extra: dict[str, Any] | None = None

    @field_validator("input_schema", "output_schema", mode="before")
    @classmethod
    def _schema(cls, value: Any) -> Any:
        value = schema_of(value) if isinstance(value, type) and issubclass(value, BaseModel) else value
        try:
            check_schema(value)
        except SchemaProblem as e:
            # `at` is the path inside the schema (a pattern's), appended to the field's by validate_spec.
            raise PydanticCustomError("schema_rule", str(e), {"at": ".".join(str(p) for p in e.at)}) from e
        return value

    @field_validator("meta")
    @classmethod
    def _meta_size(cls, value: Any) -> Any:
        if value is not None:
            json_bound(value, 16 * 1024)
        return value

    @field_validator("icons")
    @classmethod
    def _icons_size(cls, value: Any) -> Any:
        if value is not None:
            json_bound(value, 32 * 1024)
        return value

    @field_validator("execution")
    @classmethod
    def _execution_size(cls, value: Any) -> Any:
        if value is not None:
            json_bound(value, 4 * 1024)
        return value

    @field_validator("mcp_extra")
    @classmethod
    def _extra_size(cls, value: Any) -> Any:
        if value is not None:
            json_bound(value, 64 * 1024)
        return value

    @field_validator("confidence_hint", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        # An integer is a number on the wire (0 and 1 are valid hints); strict mode would refuse it.
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


class ReflectionConfig(_Spec):
    enabled: bool = True
    max_rounds: Annotated[int, Field(ge=1, le=5)] = 2
    criteria: list[Annotated[str, Field(max_length=256)]] = Field(
        default_factory=lambda: ["completeness", "accuracy"], max_length=32
    )
    model: Annotated[str, Field(max_length=256)] = "gpt-4o-mini"


class ProviderCapabilities(_Spec):
    streaming: bool | None = None
    tools: bool | None = None
    vision: bool | None = None
    jsonMode: bool | None = None


class ModelProvider(_Spec):
    id: Annotated[str, Field(min_length=1, max_length=256)]
    models: list[Annotated[str, Field(max_length=256)]] = Field(default_factory=list, max_length=256)
    kind: Literal["llm", "embedding", "reranker"]
    capabilities: ProviderCapabilities = Field(default_factory=ProviderCapabilities)
    displayName: Annotated[str, Field(max_length=256)] | None = None
    description: Annotated[str, Field(max_length=4096)] | None = None


class Dependency(_Spec):
    type: Literal["agent", "tool", "mcp_server"]
    name: Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_displayed)]
    version: ExactVersion
    capability: CapabilityName | None = None


class AgentSpec(_Spec):
    """The AgentSpec of PROTOCOL.md section 3, with its defaults."""

    agent_type: AgentType
    version: SpecVersion
    description: Annotated[str, Field(max_length=8192)]
    owner_team: Annotated[str, Field(min_length=1, max_length=256)]
    capabilities: list[Capability] = Field(min_length=1, max_length=256)
    nats_subject: Annotated[
        str,
        Field(min_length=1, max_length=512),
        _matching(NATS_SUBJECT_RE, "a NATS subject without wildcards, spaces or control characters"),
        AfterValidator(_not_reserved),
    ]
    consumer_group: Annotated[
        str,
        Field(min_length=1, max_length=256),
        _matching(QUEUE_GROUP_RE, "a NATS queue group name without spaces or control characters"),
    ]
    supported_patterns: list[SupportedPattern] = Field(default_factory=lambda: [_COORDINATOR_MANAGED])
    max_concurrent_tasks: Annotated[int, Field(ge=1)] = 10
    task_timeout_ms: Annotated[int, Field(ge=1000)] = 60000
    llm_timeout_ms: Annotated[int, Field(ge=1000)] = 30000
    max_retries: Annotated[int, Field(ge=0)] = 3
    reflection_config: ReflectionConfig | None = Field(default_factory=ReflectionConfig)
    evaluators: list[Annotated[str, Field(max_length=256)]] = Field(default_factory=list, max_length=256)
    tools: list[Annotated[str, Field(max_length=256)]] = Field(default_factory=list, max_length=1024)
    tenant_scope: Tenant | None = None
    tags: dict[Annotated[str, Field(max_length=256)], Annotated[str, Field(max_length=4096)]] = Field(
        default_factory=dict
    )
    runtime: Annotated[str, Field(min_length=1, max_length=128)] | None = None
    acp_port: Annotated[int, Field(ge=1, le=65535)] | None = None
    url: Annotated[str, Field(max_length=2048)] | None = None
    weight: Annotated[float, Field(gt=0, le=MAX_WEIGHT)] = 1
    providers: list[ModelProvider] | None = Field(default=None, max_length=64)
    depends: list[Dependency] | None = Field(default=None, max_length=256)
    kind: AgentKind = "agent"
    display_name: Annotated[str, Field(min_length=1, max_length=1024)] | None = None
    # v1.2: what callers ask this agent (ARD's representativeQueries), 2 to 5 of 1..512 characters.
    representative_queries: (
        Annotated[list[Annotated[str, Field(min_length=1, max_length=512)]], Field(min_length=2, max_length=5)] | None
    ) = None
    a2a_card: dict[str, Any] | None = None

    @field_validator("weight", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return float(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("capabilities")
    @classmethod
    def _unique_names(cls, caps: list[Capability]) -> list[Capability]:
        seen: set[str] = set()
        for i, cap in enumerate(caps):
            if cap.name in seen:
                message = f"duplicate capability name {cap.name!r}: names are unique within a spec"
                raise PydanticCustomError("duplicate_capability", message, {"at": f"{i}.name"})
            seen.add(cap.name)
        return caps

    def capability(self, name: str) -> Capability:
        """The capability of that name; KeyError when the spec has none."""
        for cap in self.capabilities:
            if cap.name == name:
                return cap
        raise KeyError(name)

    def to_wire(self) -> dict[str, Any]:
        """The JSON body the registry takes: absent optional fields left out, a null reflection_config kept."""
        body = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        if self.reflection_config is None:
            body["reflection_config"] = None
        return body


def validate_spec(raw: Any) -> AgentSpec:
    """An AgentSpec from JSON data; refused as the registry refuses it: InvalidSpecError with a path per issue."""
    from pydantic import ValidationError

    from .errors import InvalidSpecError, Issue

    def path(err: Any) -> str:
        # A dict key's error ends its location with "[key]"; a rule inside a schema says where in it.
        loc = [str(p) for p in err["loc"] if p != "[key]"]
        at = (err.get("ctx") or {}).get("at")
        return ".".join([*loc, at] if at else loc)

    try:
        return AgentSpec.model_validate(raw)
    except ValidationError as e:
        issues = [Issue(path=path(err), message=err["msg"]) for err in e.errors()]
        raise InvalidSpecError(f"invalid AgentSpec: {issues[0].path}: {issues[0].message}", issues=issues) from e
