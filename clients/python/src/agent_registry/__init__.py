"""Python client of the NATS-native agent registry (PROTOCOL.md v1.2).

Agents: :class:`Agent` registers, heartbeats, serves tasks and leaves cleanly.
Coordinators: :class:`RegistryClient` (every query op, ``call``), :class:`CapabilityCache`,
:func:`watch` and :func:`tools_for`. Operators: ``RegistryClient.approve``, ``reject`` and ``pending``
(the approval gate, v1.2).
"""

from .agent import Agent, AgentEvent
from .cache import Cached, CapabilityCache
from .call import CAPABILITY_HEADER, CallResult
from .client import RegistryClient
from .connection import connect
from .errors import (
    ERROR_CLASSES,
    AgentReplyError,
    AgentRequestError,
    ConflictError,
    InternalError,
    InvalidCardError,
    InvalidPayloadError,
    InvalidRequestError,
    InvalidSpecError,
    Issue,
    LimitExceededError,
    NoRouteError,
    NotFoundError,
    PayloadTooLargeError,
    RegistryError,
    RegistryTimeoutError,
    RegistryUnreachableError,
    StaleViewError,
    UnavailableError,
    UnknownInstanceError,
    is_transient,
)
from .events import APPROVAL_EVENTS, WatchedEvent, watch
from .models import (
    AgentSpec,
    Capability,
    Dependency,
    ModelProvider,
    ReflectionConfig,
    ToolAnnotations,
    schema_of,
    validate_spec,
)
from .replies import (
    AgentView,
    ApprovalData,
    ApprovalReply,
    ApprovalState,
    ApprovalView,
    CapabilitiesReply,
    CapabilityEntry,
    CloudEvent,
    LookupReply,
    PendingReply,
    Provider,
    RegisterReply,
)
from .tasks import TaskError
from .tools import ToolSet, tool_name, tools_for

__all__ = [
    "APPROVAL_EVENTS",
    "CAPABILITY_HEADER",
    "ERROR_CLASSES",
    "Agent",
    "AgentEvent",
    "AgentReplyError",
    "AgentRequestError",
    "AgentSpec",
    "AgentView",
    "ApprovalData",
    "ApprovalReply",
    "ApprovalState",
    "ApprovalView",
    "Cached",
    "CallResult",
    "CapabilitiesReply",
    "Capability",
    "CapabilityCache",
    "CapabilityEntry",
    "CloudEvent",
    "ConflictError",
    "Dependency",
    "InternalError",
    "InvalidCardError",
    "InvalidPayloadError",
    "InvalidRequestError",
    "InvalidSpecError",
    "Issue",
    "LimitExceededError",
    "LookupReply",
    "ModelProvider",
    "NoRouteError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PendingReply",
    "Provider",
    "ReflectionConfig",
    "RegisterReply",
    "RegistryClient",
    "RegistryError",
    "RegistryTimeoutError",
    "RegistryUnreachableError",
    "StaleViewError",
    "TaskError",
    "ToolAnnotations",
    "ToolSet",
    "UnavailableError",
    "UnknownInstanceError",
    "WatchedEvent",
    "connect",
    "is_transient",
    "schema_of",
    "tool_name",
    "tools_for",
    "validate_spec",
    "watch",
]
