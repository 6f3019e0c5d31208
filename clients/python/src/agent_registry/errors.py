"""Typed errors: one exception class per code of the registry's error catalogue (docs/errors.md).

A failed reply carries the headers ``Nats-Service-Error-Code`` / ``Nats-Service-Error`` and the
body ``{"error": {"code", "message", "issues"?}}``; :func:`decode_reply` turns it into the class
of its code, so callers write ``except NotFoundError`` instead of comparing strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

SERVICE_ERROR_CODE_HEADER = "Nats-Service-Error-Code"
SERVICE_ERROR_HEADER = "Nats-Service-Error"


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation problem, named by its path (``capabilities.0.name``)."""

    path: str
    message: str


class RegistryError(Exception):
    """An error reply of the registry (PROTOCOL.md section 1)."""

    code: ClassVar[str] = "internal"
    default_status: ClassVar[int] = 500

    def __init__(self, message: str, *, status: int | None = None, issues: list[Issue] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else self.default_status
        self.issues: list[Issue] = list(issues or [])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status}, message={self.message!r})"


class InvalidRequestError(RegistryError):
    code = "invalid_request"
    default_status = 400


class InvalidSpecError(RegistryError):
    code = "invalid_spec"
    default_status = 400


class InvalidCardError(RegistryError):
    code = "invalid_card"
    default_status = 400


class NotFoundError(RegistryError):
    code = "not_found"
    default_status = 404


class UnknownInstanceError(RegistryError):
    code = "unknown_instance"
    default_status = 404


class NoRouteError(RegistryError):
    code = "no_route"
    default_status = 404


class ConflictError(RegistryError):
    code = "conflict"
    default_status = 409


class PayloadTooLargeError(RegistryError):
    code = "payload_too_large"
    default_status = 413


class LimitExceededError(RegistryError):
    code = "limit_exceeded"
    default_status = 429


class UnavailableError(RegistryError):
    code = "unavailable"
    default_status = 503


class StaleViewError(RegistryError):
    code = "stale_view"
    default_status = 503


class InternalError(RegistryError):
    code = "internal"
    default_status = 500


#: Every code of the catalogue (src/protocol/errors.ts) and its class.
ERROR_CLASSES: Mapping[str, type[RegistryError]] = {
    cls.code: cls
    for cls in (
        InvalidRequestError,
        InvalidSpecError,
        InvalidCardError,
        NotFoundError,
        UnknownInstanceError,
        NoRouteError,
        ConflictError,
        PayloadTooLargeError,
        LimitExceededError,
        UnavailableError,
        StaleViewError,
        InternalError,
    )
}

# A body naming no known code (a newer registry) is classed by its status alone.
_BY_STATUS: Mapping[int, type[RegistryError]] = {
    400: InvalidRequestError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: LimitExceededError,
    503: UnavailableError,
}


class RegistryTimeoutError(Exception):
    """Nobody answered within the timeout: the registry may be overloaded, partitioned or gone."""

    def __init__(self, subject: str, timeout: float) -> None:
        super().__init__(f"registry did not answer on {subject} within {timeout:g} s")
        self.subject = subject
        self.timeout = timeout


class RegistryUnreachableError(Exception):
    """Nobody listens on the subject (NATS "no responders"), or the connection is closed."""

    def __init__(self, subject: str, reason: str = "no registry is listening") -> None:
        super().__init__(f"{reason} on {subject}")
        self.subject = subject
        self.reason = reason


class InvalidPayloadError(Exception):
    """``call``: the payload (``direction="input"``, never sent) or the agent's reply breaks the schema."""

    def __init__(
        self, message: str, *, direction: str, agent_type: str, issues: list[Issue], reply: Any = None
    ) -> None:
        super().__init__(message)
        self.direction = direction
        self.agent_type = agent_type
        self.issues = issues
        self.reply = reply


class AgentRequestError(Exception):
    """``call``: the agent did not answer in time (``reason="timeout"``) or nobody listens (``"unreachable"``)."""

    def __init__(self, message: str, *, reason: str, agent_type: str, subject: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.agent_type = agent_type
        self.subject = subject


class AgentReplyError(Exception):
    """``call``: the agent answered with an error (``Nats-Service-Error-Code``); ``code`` is its body's code."""

    def __init__(self, message: str, *, agent_type: str, status: int, code: str, issues: list[Issue]) -> None:
        super().__init__(message)
        self.agent_type = agent_type
        self.status = status
        self.code = code
        self.issues = issues


def is_transient(error: BaseException) -> bool:
    """True for failures worth retrying later: no answer, 5xx, ``stale_view``."""
    if isinstance(error, RegistryTimeoutError | RegistryUnreachableError):
        return True
    return isinstance(error, RegistryError) and error.status >= 500


def parse_issues(raw: Any) -> list[Issue]:
    if not isinstance(raw, list):
        return []
    return [Issue(path=str(i.get("path", "")), message=str(i.get("message", ""))) for i in raw if isinstance(i, dict)]


def error_from_reply(headers: Mapping[str, str] | None, data: bytes) -> RegistryError | None:
    """The typed error a reply carries, or None when it is a success."""
    header_code = (headers or {}).get(SERVICE_ERROR_CODE_HEADER, "")
    body: Any = None
    if data:
        try:
            body = json.loads(data)
        except ValueError:
            body = None
    err = body.get("error") if isinstance(body, dict) else None
    code = err.get("code") if isinstance(err, dict) else None
    if header_code == "" and not (isinstance(code, str) and code in ERROR_CLASSES):
        return None
    status = int(header_code) if header_code.isdigit() else None
    message = err.get("message") if isinstance(err, dict) else None
    if not isinstance(message, str) or message == "":
        message = (headers or {}).get(SERVICE_ERROR_HEADER, "") or "registry error"
    issues = parse_issues(err.get("issues") if isinstance(err, dict) else None)
    cls = ERROR_CLASSES.get(code) if isinstance(code, str) else None
    if cls is None:
        cls = _BY_STATUS.get(status or 0, InternalError)
    return cls(message, status=status, issues=issues)


def decode_reply(headers: Mapping[str, str] | None, data: bytes) -> Any:
    """A reply's JSON result, or raises the typed error it carries."""
    error = error_from_reply(headers, data)
    if error is not None:
        raise error
    if not data:
        return {}
    try:
        return json.loads(data)
    except ValueError as e:
        raise InternalError(f"registry reply is not JSON: {e}") from e
