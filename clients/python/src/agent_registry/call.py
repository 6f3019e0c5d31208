"""``RegistryClient.call``: a coordinator's task sent the checked way (PROTOCOL.md section 11.4).

The agent is the one ``route`` picks (or the one named); the registry's ``check`` op judges the
payload against that agent's input schema before anything is sent, and the reply against the output
schema after, so every client, in any language, gets the same verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import (
    SERVICE_ERROR_CODE_HEADER,
    SERVICE_ERROR_HEADER,
    AgentReplyError,
    AgentRequestError,
    InvalidPayloadError,
    Issue,
    PayloadTooLargeError,
    RegistryTimeoutError,
    RegistryUnreachableError,
    parse_issues,
)

if TYPE_CHECKING:
    from .client import RegistryClient

#: Header naming the capability a task is for, so an agent serving several on one subject can dispatch.
CAPABILITY_HEADER = "Registry-Capability"


@dataclass(frozen=True, slots=True)
class CallResult:
    agent_type: str
    nats_subject: str
    reply: Any


async def call_capability(
    client: RegistryClient,
    capability: str,
    payload: Any,
    agent_type: str | None,
    timeout: float,
    check_reply: bool,
    min_revision: int | None = None,
) -> CallResult:
    if agent_type is None:
        route = await client.route(skill=capability, min_revision=min_revision)
        agent_type, subject = route.agent_type, route.nats_subject
    else:
        subject = (await client.get(agent_type, min_revision=min_revision)).agent.nats_subject
    verdict = await client.check(capability, payload, agent_type=agent_type, min_revision=min_revision)
    if not verdict.valid:
        raise _invalid("input", capability, agent_type, [Issue(e.path, e.message) for e in verdict.errors])
    data = json.dumps(payload).encode()
    max_payload = client.nc.max_payload
    if max_payload and len(data) > max_payload:
        raise PayloadTooLargeError(
            f"the payload is {len(data)} bytes; NATS carries at most {max_payload} in one message",
            issues=[Issue("payload", f"at most {max_payload} bytes as JSON")],
        )
    try:
        msg = await client.nc.request(subject, data, timeout=timeout, headers={CAPABILITY_HEADER: capability})
    except Exception as e:
        from .client import request_failure

        failure = request_failure(e, subject, timeout, "nobody listens")
        if isinstance(failure, RegistryTimeoutError):
            raise AgentRequestError(
                f"{agent_type} did not answer on {subject} within {timeout:g} s; the task may still be running",
                reason="timeout",
                agent_type=agent_type,
                subject=subject,
            ) from e
        if isinstance(failure, RegistryUnreachableError):
            raise AgentRequestError(
                f"no instance of {agent_type} listens on {subject} ({failure.reason})",
                reason="unreachable",
                agent_type=agent_type,
                subject=subject,
            ) from e
        raise failure from e
    reply = _reply_of(msg.headers, msg.data, agent_type)
    if check_reply:
        verdict = await client.check(capability, reply, agent_type=agent_type, direction="output")
        if not verdict.valid:
            issues = [Issue(e.path, e.message) for e in verdict.errors]
            raise _invalid("output", capability, agent_type, issues, reply)
    return CallResult(agent_type=agent_type, nats_subject=subject, reply=reply)


def _invalid(
    direction: str, capability: str, agent_type: str, issues: list[Issue], reply: Any = None
) -> InvalidPayloadError:
    what = (
        "the payload does not match the input schema"
        if direction == "input"
        else "the agent's reply does not match the output schema"
    )
    sent = ", so it was not sent" if direction == "input" else ""
    first = f": {issues[0].path}: {issues[0].message}" if issues else ""
    more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
    return InvalidPayloadError(
        f"{what} of {capability} ({agent_type}){sent}{first}{more}",
        direction=direction,
        agent_type=agent_type,
        issues=issues,
        reply=reply,
    )


def _reply_of(headers: dict[str, str] | None, data: bytes, agent_type: str) -> Any:
    """The reply as JSON (its text when not JSON); an error reply of the agent raises AgentReplyError."""
    text = data.decode("utf-8", errors="replace")
    status = (headers or {}).get(SERVICE_ERROR_CODE_HEADER)
    body: Any = None
    if text:
        try:
            body = json.loads(text)
        except ValueError:
            body = text
    if status:
        err = body.get("error") if isinstance(body, dict) else None
        code = str(err.get("code", "agent_error")) if isinstance(err, dict) else "agent_error"
        message = (headers or {}).get(SERVICE_ERROR_HEADER) or text
        raise AgentReplyError(
            f"{agent_type} answered with error {status}: {message}",
            agent_type=agent_type,
            status=int(status) if status.isdigit() else 500,
            code=code,
            issues=parse_issues(err.get("issues") if isinstance(err, dict) else None),
        )
    return None if text == "" else body
