"""Argument checks shared by every public entry point (engine, async writer,
lifecycle jobs, working memory): one owner rule, one clock rule.

All raise :class:`~memory_engine.errors.ValidationError` naming the field; none
touches a store.
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from .errors import ValidationError
from .models import MemoryType, Source, to_epoch

__all__ = ["ROLE_SOURCE", "epoch_now", "parse_memory_type", "require_fact", "require_owner", "require_role",
           "require_text"]

#: the source a memory gets from the role of who said it (seed 004: user-stated > model-inferred)
ROLE_SOURCE: dict[str, Source] = {"user": Source.USER_STATED, "assistant": Source.MODEL_INFERRED, "tool": Source.TOOL,
                                  "system": Source.USER_STATED}


def require_owner(user_id: Any, tenant_id: Any) -> tuple[str, str]:
    """``(user_id, tenant_id)`` when both are non-empty strings (seed 004: every memory has an owner;
    no owner, no read or write). Raises ValidationError (``field`` = the missing one)."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValidationError("user_id is required: every memory has an owner (seed 004)", field="user_id")
    if not isinstance(tenant_id, str) or not tenant_id.strip():
        raise ValidationError("tenant_id must be a non-empty string", field="tenant_id")
    return user_id, tenant_id


def require_text(text: Any) -> str:
    """``text`` when it is a string (empty allowed: the write rules reject it). Raises ValidationError."""
    if not isinstance(text, str):
        raise ValidationError("text must be a string", field="text")
    return text


def require_role(role: Any) -> str:
    """``role`` when it is one of :data:`ROLE_SOURCE` (user, assistant, tool, system). Raises ValidationError."""
    if role not in ROLE_SOURCE:
        raise ValidationError(f"role must be one of {sorted(ROLE_SOURCE)}", field="role")
    return str(role)


def parse_memory_type(memory_type: str | MemoryType | None) -> MemoryType | None:
    """The :class:`MemoryType` named by ``memory_type`` (None passes). Raises ValidationError for an unknown name."""
    if memory_type is None:
        return None
    try:
        return MemoryType(memory_type)
    except ValueError as e:
        raise ValidationError(
            f"unknown memory_type {memory_type!r}; valid: {', '.join(t.value for t in MemoryType)}", field="memory_type"
        ) from e


def require_fact(fact: Any) -> dict[str, Any] | None:
    """``fact`` when None or a dict with a non-empty ``key`` and a ``value``. Raises ValidationError."""
    if fact is not None and (not isinstance(fact, dict) or not str(fact.get("key", "")).strip() or "value" not in fact):
        raise ValidationError("fact must be a dict with a non-empty 'key' and a 'value'", field="fact")
    return fact


def epoch_now(now: datetime | None) -> float:
    """Epoch seconds of ``now`` (timezone-aware); None reads the clock once, at the call's entry.
    Raises ValidationError for a naive datetime (time is injectable, never guessed)."""
    if now is None:
        return time.time()
    if now.tzinfo is None:
        raise ValidationError("now must be timezone-aware", field="now")
    return to_epoch(now)
