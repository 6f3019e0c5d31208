"""The task side of an agent: handlers per capability, the payload checked against the capability's input
schema before a handler runs, and replies (or errors in the protocol's error shape) sent back."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from jsonschema import validators
from pydantic import BaseModel

from .call import CAPABILITY_HEADER
from .errors import SERVICE_ERROR_CODE_HEADER, SERVICE_ERROR_HEADER, Issue
from .models import JsonSchema

TaskHandler = Callable[[Any], Awaitable[Any]]
MAX_ISSUES = 20


class TaskError(Exception):
    """Raised by a handler to answer with an error of its choosing (``code``, HTTP-like ``status``, ``issues``)."""

    def __init__(
        self, message: str, *, code: str = "agent_error", status: int = 500, issues: list[Issue] | None = None
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.issues = list(issues or [])


class PayloadChecker:
    """A capability's input schema compiled once (jsonschema, the draft the schema names; 2020-12 by default)."""

    def __init__(self, schema: JsonSchema) -> None:
        cls = validators.validator_for(schema) if isinstance(schema, dict) else validators.Draft202012Validator
        cls.check_schema(schema)
        self._validator = cls(schema)

    def issues(self, payload: Any) -> list[Issue]:
        found: list[Issue] = []
        for error in self._validator.iter_errors(payload):
            path = ".".join(["payload", *(str(p) for p in error.absolute_path)])
            found.append(Issue(path=path, message=str(error.message)))
            if len(found) >= MAX_ISSUES:
                break
        return found


def error_reply(error: TaskError) -> tuple[bytes, dict[str, str]]:
    """The protocol's error shape: status and message headers, ``{"error": {code, message, issues?}}`` body."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.issues:
        body["issues"] = [{"path": i.path, "message": i.message} for i in error.issues]
    headers = {SERVICE_ERROR_CODE_HEADER: str(error.status), SERVICE_ERROR_HEADER: error.message.splitlines()[0][:512]}
    return json.dumps({"error": body}).encode(), headers


def encode_result(result: Any) -> bytes:
    if isinstance(result, BaseModel):
        return result.model_dump_json().encode()
    return json.dumps(result).encode()


class TaskRouter:
    """Chooses the handler of a task and runs it on a checked payload."""

    def __init__(self) -> None:
        self.handlers: dict[str, TaskHandler] = {}
        self.checkers: dict[str, PayloadChecker] = {}

    def add(self, capability: str, handler: TaskHandler) -> None:
        self.handlers[capability] = handler

    def set_schema(self, capability: str, schema: JsonSchema) -> None:
        self.checkers[capability] = PayloadChecker(schema)

    def _choose(self, headers: Mapping[str, str] | None, payload: Any) -> str:
        named = (headers or {}).get(CAPABILITY_HEADER)
        if named is not None:
            if named not in self.handlers:
                raise TaskError(f"this agent has no handler for {named}", code="invalid_request", status=400)
            return named
        if len(self.handlers) == 1:
            return next(iter(self.handlers))
        # A task sent without the header (a plain request): the one capability whose schema accepts it.
        fitting = [c for c in self.handlers if c in self.checkers and not self.checkers[c].issues(payload)]
        if len(fitting) == 1:
            return fitting[0]
        raise TaskError(
            f"the task names no capability (header {CAPABILITY_HEADER}) and {len(fitting)} of this agent's "
            "capabilities accept its payload",
            code="invalid_request",
            status=400,
        )

    async def run(self, headers: Mapping[str, str] | None, data: bytes) -> tuple[bytes, dict[str, str] | None]:
        try:
            try:
                payload = json.loads(data) if data else None
            except ValueError as e:
                raise TaskError(f"the task is not JSON: {e}", code="invalid_request", status=400) from e
            capability = self._choose(headers, payload)
            checker = self.checkers.get(capability)
            issues = checker.issues(payload) if checker is not None else []
            if issues:
                first = f"{issues[0].path}: {issues[0].message}"
                raise TaskError(
                    f"the payload does not match the input schema of {capability}: {first}",
                    code="invalid_payload",
                    status=400,
                    issues=issues,
                )
            return encode_result(await self.handlers[capability](payload)), None
        except TaskError as e:
            return error_reply(e)
        except Exception as e:
            # A handler's failure goes back to the caller; the agent keeps serving.
            return error_reply(TaskError(f"{type(e).__name__}: {e}", code="agent_error", status=500))
