"""Argument checks shared by every public entry point (engine, async writer,
lifecycle jobs, working memory): one owner rule, one clock rule.

All raise :class:`~memory_engine.errors.ValidationError` naming the field; none
touches a store.
"""

from __future__ import annotations

import re
import time
from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

from .errors import ValidationError
from .models import MemoryType, Source, to_epoch

E = TypeVar("E", bound=Enum)

__all__ = ["ROLE_SOURCE", "check_read_bounds", "check_write_bounds", "epoch_now", "parse_enum", "parse_memory_type", "parse_time",
           "require_fact", "require_owner", "require_role", "require_tenant", "require_text"]

#: ASCII control characters (C0 and DEL): refused in owner ids
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

#: the source a memory gets from the role of who said it (seed 004: user-stated > model-inferred)
ROLE_SOURCE: dict[str, Source] = {"user": Source.USER_STATED, "assistant": Source.MODEL_INFERRED, "tool": Source.TOOL,
                                  "system": Source.USER_STATED}


def require_owner(user_id: Any, tenant_id: Any) -> tuple[str, str]:
    """``(user_id, tenant_id)`` when both are non-empty strings (seed 004: every memory has an owner;
    no owner, no read or write). Raises ValidationError (``field`` = the missing one, or the one holding an
    ASCII control character: no client sends one, and the engine's own warm-up reads as such an owner)."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValidationError("user_id is required: every memory has an owner", field="user_id")  # seed 004
    if _CONTROL.search(user_id):
        raise ValidationError("user_id must not contain control characters", field="user_id")
    return user_id, require_tenant(tenant_id)


def require_tenant(tenant_id: Any) -> str:
    """``tenant_id`` when it is a non-empty string. Raises ValidationError."""
    if not isinstance(tenant_id, str) or not tenant_id.strip():
        raise ValidationError("tenant_id must be a non-empty string", field="tenant_id")
    if _CONTROL.search(tenant_id):
        raise ValidationError("tenant_id must not contain control characters", field="tenant_id")
    return tenant_id


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


def parse_enum(kind: type[E], value: object, field: str) -> E:
    """The member of the string enum ``kind`` whose value is ``value``. Raises ValidationError naming ``field``
    and the valid values for anything else."""
    try:
        return kind(value)
    except ValueError as e:
        raise ValidationError(
            f"unknown {field} {value!r}; valid: {', '.join(str(m.value) for m in kind)}", field=field
        ) from e


def parse_memory_type(memory_type: str | MemoryType | None) -> MemoryType | None:
    """The :class:`MemoryType` named by ``memory_type`` (None passes). Raises ValidationError for an unknown name."""
    return None if memory_type is None else parse_enum(MemoryType, memory_type, "memory_type")


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


def parse_time(value: Any, field: str = "now") -> datetime | None:
    """An ISO 8601 time with a UTC offset ('2026-03-02T09:00:00+08:00', '...Z') as an aware datetime; None for
    None. Raises ValidationError naming ``field`` for anything else, a time without an offset included (time is
    never guessed). The HTTP service's ``now`` and ``memwb add --time`` read times through it."""
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(str(value))
    except ValueError as e:
        raise ValidationError(f"{field} must be an ISO 8601 time with a UTC offset, got {value!r}", field=field) from e
    if dt.tzinfo is None:
        raise ValidationError(f"{field} must carry a UTC offset (e.g. 2026-03-02T09:00:00+08:00)", field=field)
    return dt


def _json_bytes(v: Any) -> int:
    import json

    try:
        return len(json.dumps(v, ensure_ascii=False, default=str).encode())
    except (TypeError, ValueError) as e:
        raise ValidationError(f"not JSON-serialisable: {e}", field="metadata") from e


def _check_ids(limits: Any, **ids: Any) -> None:
    for name, v in ids.items():
        if isinstance(v, str) and len(v) > limits.max_id_chars:
            raise ValidationError(f"{name} of {len(v)} characters exceeds limits.max_id_chars={limits.max_id_chars}",
                                  field=name)


def check_write_bounds(limits: Any, *, text: str, user_id: str, tenant_id: str, session_id: str | None,
                       metadata: Any, fact: Any) -> None:
    """The ``config.limits`` bounds of one write (text length, id lengths, metadata and fact size in JSON
    bytes). Raises ValidationError naming the field and the limit; nothing is stored."""
    if len(text) > limits.max_text_chars:
        raise ValidationError(
            f"text of {len(text)} characters exceeds limits.max_text_chars={limits.max_text_chars}", field="text")
    _check_ids(limits, user_id=user_id, tenant_id=tenant_id, session_id=session_id)
    if metadata and _json_bytes(metadata) > limits.max_metadata_bytes:
        raise ValidationError(f"metadata exceeds limits.max_metadata_bytes={limits.max_metadata_bytes}",
                              field="metadata")
    if fact is not None and _json_bytes(fact) > limits.max_fact_bytes:
        raise ValidationError(f"fact exceeds limits.max_fact_bytes={limits.max_fact_bytes}", field="fact")


def check_read_bounds(limits: Any, *, query: Any, top_k: Any, user_id: str, tenant_id: str,
                      session_id: str | None) -> None:
    """The ``config.limits`` bounds of one retrieve: a string query of at most ``max_query_chars``, an int
    ``top_k`` in ``1..max_top_k`` (None = the configured default), id lengths. Raises ValidationError."""
    if not isinstance(query, str):
        raise ValidationError("query must be a string", field="query")
    if len(query) > limits.max_query_chars:
        raise ValidationError(
            f"query of {len(query)} characters exceeds limits.max_query_chars={limits.max_query_chars}", field="query")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool)
                              or not 1 <= top_k <= limits.max_top_k):
        raise ValidationError(f"top_k must be an integer in 1..{limits.max_top_k} (limits.max_top_k), got {top_k!r}",
                              field="top_k")
    _check_ids(limits, user_id=user_id, tenant_id=tenant_id, session_id=session_id)


def require_timezone(name: str | None) -> str | None:
    """An IANA time zone name ('Asia/Shanghai'), 'UTC' or an offset ('+08:00'), or None.
    Raises ValidationError (field ``timezone``) for an unknown name."""
    if name is None:
        return None
    from .retrieve.temporal import timezone_of

    try:
        timezone_of(str(name))
    except ValueError as e:
        raise ValidationError(str(e), field="timezone") from e
    return str(name)
