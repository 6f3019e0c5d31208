"""protocol/vectors: loading and the subset match of protocol/vectors/README.md."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from .harness import REPO

VECTORS = REPO / "protocol" / "vectors"


@cache
def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VECTORS / f"{name}.json").read_text())
    return data


def vectors(name: str) -> list[dict[str, Any]]:
    return list(load(name)["vectors"])


def mismatch(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where ``actual`` does not match ``expected`` (objects: expected keys; arrays: same length), or None."""
    where = path or "(root)"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                return f"{where}.{key}: missing"
            found = mismatch(value, actual[key], f"{path}.{key}" if path else key)
            if found:
                return found
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {len(expected)} items, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = mismatch(e, a, f"{path}.{i}" if path else str(i))
            if found:
                return found
        return None
    # JSON equality: 1 and 1.0 are one number, but true is not 1.
    same = expected is actual if isinstance(expected, bool) or isinstance(actual, bool) else expected == actual
    return None if same else f"{where}: expected {expected!r}, got {actual!r}"


def warning_paths(warnings: list[str]) -> list[str]:
    return [w.split(": ", 1)[0] for w in warnings]
