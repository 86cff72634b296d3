"""Per-call state only: several users writing on several threads each see their own
text on their own write span (the write span once read its content from an engine
attribute after the owner's lock was released, so it could carry another user's text)."""

from __future__ import annotations

import threading

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

pytestmark = pytest.mark.integration

USERS = ("alice", "bob", "carol", "dave")
ROUNDS = 12


def test_write_spans_carry_their_own_users_content(make_engine):
    exporter = InMemorySpanExporter()
    eng = make_engine(span_processors=[SimpleSpanProcessor(exporter)])
    start = threading.Barrier(len(USERS))
    errors: list[BaseException] = []

    def write_all(user: str) -> None:
        try:
            start.wait()
            for i in range(ROUNDS):
                eng.add(f"{user} prefers notebook model X{i}{user[:2].upper()}7 for work", user_id=user)
        except BaseException as e:  # surfaced below: a thread's failure must fail the test
            errors.append(e)

    threads = [threading.Thread(target=write_all, args=(u,)) for u in USERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    spans = [s for s in exporter.get_finished_spans() if s.name == "memory.write"]
    assert len(spans) == len(USERS) * ROUNDS
    for s in spans:
        user, content = s.attributes["memory.user_id"], s.attributes["memory.content"]
        assert isinstance(content, str) and content.startswith(f"{user} prefers"), (user, content)
