"""The shared argument checks: one owner rule, one clock rule, one role/type/fact rule
for the engine, the async writer and the lifecycle jobs."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from memory_engine.errors import ValidationError
from memory_engine.models import MemoryType, Source
from memory_engine.validation import (
    ROLE_SOURCE,
    epoch_now,
    parse_memory_type,
    require_fact,
    require_owner,
    require_role,
    require_tenant,
    require_text,
)


@pytest.mark.parametrize(("user", "tenant", "field"), [
    ("", "t", "user_id"), ("  ", "t", "user_id"), (None, "t", "user_id"), ("u", "", "tenant_id"), ("u", 3, "tenant_id"),
])
def test_owner_required(user, tenant, field):
    with pytest.raises(ValidationError) as e:
        require_owner(user, tenant)
    assert e.value.field == field and isinstance(e.value, ValueError)


def test_valid_arguments_pass_through():
    assert require_owner("u", "t") == ("u", "t") and require_tenant("t") == "t"
    assert require_text("") == "" and require_role("tool") == "tool" and ROLE_SOURCE["tool"] == Source.TOOL
    assert parse_memory_type("fact") == MemoryType.FACT and parse_memory_type(None) is None
    assert require_fact({"key": "k", "value": None}) == {"key": "k", "value": None} and require_fact(None) is None


@pytest.mark.parametrize(("call", "field"), [
    (lambda: require_text(b"bytes"), "text"), (lambda: require_role("robot"), "role"),
    (lambda: parse_memory_type("dream"), "memory_type"), (lambda: require_fact({"key": " "}), "fact"),
    (lambda: require_fact(["k", "v"]), "fact"), (lambda: epoch_now(datetime(2026, 1, 1)), "now"),
])
def test_bad_arguments_name_their_field(call, field):
    with pytest.raises(ValidationError) as e:
        call()
    assert e.value.field == field


def test_epoch_now():
    assert epoch_now(datetime(2026, 1, 1, tzinfo=UTC)) == datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    before = time.time()
    assert before <= epoch_now(None) <= time.time()
