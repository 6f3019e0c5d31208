"""The rules a capability schema must follow (PROTOCOL.md section 3, protocol/README.md), checked with a
maintained JSON Schema library rather than re-coded: it compiles (jsonschema's meta-schema check), has
no remote ``$ref``, its patterns can run in linear time (no lookaround, no backreferences: the registry
runs them with RE2), and it stays within 256 objects and arrays, 64 KiB of JSON and 64 levels.

Refs to stored schemas (``{"$ref": "#Name:1.0.0"}``) are the registry's to resolve.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema import exceptions, validators

MAX_CONTAINERS = 256
MAX_CHARS = 64 * 1024
MAX_DEPTH = 64
# Lookahead, lookbehind (plain and named-group forms aside) and backreferences: what RE2 cannot run.
_NON_LINEAR = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")


class SchemaProblem(ValueError):
    def __init__(self, message: str, at: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.at = at


def _walk(node: Any, at: tuple[str | int, ...], depth: int, counts: list[int]) -> None:
    if isinstance(node, dict | list):
        counts[0] += 1
        if counts[0] > MAX_CONTAINERS:
            raise SchemaProblem(f"more than {MAX_CONTAINERS} objects and arrays")
        if depth > MAX_DEPTH:
            raise SchemaProblem(f"nests more than {MAX_DEPTH} levels")
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, (*at, i), depth + 1, counts)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#"):
        raise SchemaProblem(f"remote $ref {ref!r}: only refs within the schema or to stored schemas (#Name:Version)")
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        _check_pattern(pattern, (*at, "pattern"))
    for key, value in node.items():
        if key == "patternProperties" and isinstance(value, dict):
            for name in value:
                _check_pattern(name, (*at, "patternProperties", name))
        _walk(value, (*at, key), depth + 1, counts)


def _check_pattern(pattern: str, at: tuple[str | int, ...]) -> None:
    if _NON_LINEAR.search(pattern):
        raise SchemaProblem("lookaround and backreferences cannot run in linear time (RE2)", at)
    try:
        re.compile(pattern)
    except re.error as e:
        raise SchemaProblem(f"not a regular expression: {e}", at) from e


def check_schema(schema: Any) -> None:
    """Raises SchemaProblem (with ``at``, the path inside the schema) when the registry would refuse it."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaProblem("must be a JSON Schema: an object or a boolean")
    if len(json.dumps(schema, separators=(",", ":"))) > MAX_CHARS:
        raise SchemaProblem(f"larger than {MAX_CHARS} characters as JSON")
    _walk(schema, (), 1, [0])
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as e:
        raise SchemaProblem(f"does not compile: {e.message}") from e


def json_bound(value: Any, max_chars: int) -> None:
    """A kept MCP value (``_meta``, ``icons``, ``execution``, ``mcp_extra``) within its size as JSON text."""
    if len(json.dumps(value, separators=(",", ":"), ensure_ascii=False)) > max_chars:
        raise ValueError(f"larger than {max_chars} characters as JSON; the limit is {max_chars}")
