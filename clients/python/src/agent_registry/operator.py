"""The operators' requests (protocol v1.2, docs/trust.md): approval decisions, deprecation, trust roots.

Each goes to ``<prefix>.<group>.<op>.<token>``, under no tenant whatever the client's (only the
operator role may publish there under auth.conf), and reads its reply as one model.
:class:`OperatorCalls` is the one place that subject is made and its token checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from .ids import check_token

R = TypeVar("R", bound=BaseModel)


def request_body(**fields: Any) -> dict[str, Any]:
    """A request body: the fields given, those left at None omitted."""
    return {k: v for k, v in fields.items() if v is not None}


class OperatorCalls:
    """``_operator_call`` for a client that has ``prefix`` and ``request``."""

    prefix: str

    async def request(
        self, subject: str, body: Mapping[str, Any], timeout: float | None = None, *, nobody: str | None = None
    ) -> Any:
        raise NotImplementedError

    async def _operator_call(
        self,
        group: str,
        op: str,
        token: tuple[str, str, re.Pattern[str]],
        body: Mapping[str, Any],
        reply: type[R],
        timeout: float | None,
    ) -> R:
        # Checked here: a token that is not one subject token would send the request elsewhere.
        name, value, pattern = token
        subject = f"{self.prefix}.{group}.{op}.{check_token(name, value, pattern)}"
        return reply.model_validate(await self.request(subject, body, timeout))
