"""Token rules of PROTOCOL.md section 1 (the same patterns as the service's src/protocol/ids.ts)."""

from __future__ import annotations

import re

AGENT_TYPE_RE = re.compile(r"^[a-z0-9]([a-z0-9_-]{0,126}[a-z0-9])?$")
INSTANCE_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
TENANT_RE = re.compile(r"^[a-z0-9]([a-z0-9_-]{0,62}[a-z0-9])?$")
SCHEMA_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
CAPABILITY_RE = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
CAPABILITY_MAX_LENGTH = 256
SEMVER_RE = re.compile(
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?$"
)
NATS_SUBJECT_RE = re.compile(r"^[^\s.*>\x00-\x1f\x7f-\x9f]+(\.[^\s.*>\x00-\x1f\x7f-\x9f]+)*$")
QUEUE_GROUP_RE = re.compile(r"^[^\s.*>\x00-\x1f\x7f-\x9f]+$")
RESERVED_SUBJECT_RE = re.compile(r"^(\$|_INBOX(\.|_|$))")
UNSAFE_NAME_CHAR_RE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def check_token(kind: str, value: str, rule: re.Pattern[str]) -> str:
    """The value when it is a valid subject token; a bad one would build another subject (or a wildcard)."""
    from .errors import InvalidRequestError

    if not isinstance(value, str) or rule.fullmatch(value) is None:
        raise InvalidRequestError(f"invalid {kind}: {value!r}")
    if rule is CAPABILITY_RE and len(value) > CAPABILITY_MAX_LENGTH:
        raise InvalidRequestError(f"invalid {kind}: at most {CAPABILITY_MAX_LENGTH} characters")
    return value
