"""What the assistant suggested never outranks what the user said about the same subject
(issue 16, failure class 7; seed 004: user-stated > model-inferred), even when the
assistant's restatement repeats the question's words. Nothing is archived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import defer_to_user

T0 = datetime(2026, 1, 5, 8, tzinfo=UTC)


def test_defer_to_user_caps_the_assistant_on_the_same_subject_only():
    v, far = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    asst = Candidate("a", fused=0.9, similarity=1.0, coverage=1.0)
    user = Candidate("u", fused=0.6, similarity=0.7, coverage=0.5)
    out, capped = defer_to_user([asst, user], {"a": v, "u": v}, {"a": "assistant", "u": "user"}, lambda c: c, 0.55, 0.8)
    assert capped == {"a": "u"} and [c.memory_id for c in out] == ["u", "a"]
    assert out[1].fused == pytest.approx(0.8 * 0.6)
    # another subject, or a user memory far less relevant than the assistant's: untouched
    assert defer_to_user([asst, user], {"a": v, "u": far}, {"a": "assistant"}, lambda c: c, 0.55, 0.8)[1] == {}
    weak = Candidate("u", fused=0.3, similarity=0.3, coverage=0.2)
    assert defer_to_user([asst, weak], {"a": v, "u": v}, {"a": "assistant"}, lambda c: c, 0.55, 0.8, 0.5)[1] == {}


@pytest.fixture(scope="module")
def engines():
    # the addressee gate (retrieve/addressee.py) would drop the assistant's turn from a first-person
    # question altogether; off here, so the precedence stage alone is what is measured
    on = MemoryEngine.in_memory(EngineConfig().with_overrides({"tracing.enabled": False,
                                                               "retrieval.touch_on_hit": False,
                                                               "retrieval.assistant_needs_addressee": False}))
    off = MemoryEngine(on.config.with_overrides({"retrieval.stale_user_precedence": False}), embedder=on.embedder,
                       store=on.store, ephemeral=True)
    yield on, off
    on.close()


@pytest.mark.parametrize("assistant,user,query", [
    ("So you drink a flat white every morning before work, got it",
     "I drink green tea every morning, coffee makes me jittery", "what do I drink every morning before work?"),
    ("建议您每天早上喝一杯黑咖啡提神，很多上班族都是这样", "我喝咖啡会心慌，早上一般只喝一杯绿茶", "我每天早上喝什么"),
])
def test_the_users_statement_ranks_above_the_assistants_restatement(engines, assistant, user, query):
    on, off = engines
    owner = f"prec-{abs(hash(query))}"
    a = on.add(assistant, user_id=owner, role="assistant", session_id="s1", now=T0).memory_id
    u = on.add(user, user_id=owner, session_id="s1", now=T0 + timedelta(minutes=1)).memory_id
    at = T0 + timedelta(days=2)
    assert off.retrieve(query, user_id=owner, now=at).hits[0].memory_id == a  # the old ranking
    hits = on.retrieve(query, user_id=owner, now=at).hits
    assert [h.memory_id for h in hits[:2]] == [u, a]
    assert on.memory(a, user_id=owner).status.value == "current"
