"""The write stages one by one: clean+redact, gate, records, dedup identity, the
same-subject rule, and their configuration checks at construction."""

from __future__ import annotations

import numpy as np
import pytest

from memory_engine.config import LifecycleSection, WriteSection
from memory_engine.errors import ConfigError
from memory_engine.models import MemoryRecord, MemoryStatus, MemoryType, Source
from memory_engine.write.clean import Cleaner
from memory_engine.write.dedup import DuplicateFinder, identity
from memory_engine.write.gate import WriteGate
from memory_engine.write.records import build_record, deprecate_patch, new_id, point, touch_patch
from memory_engine.write.supersede import SubjectRule, Superseder, term_share


def test_cleaner_trims_caps_and_redacts():
    c = Cleaner(WriteSection(max_chars=40))
    out = c("   call me at 13812345678 tomorrow please, it is about the lease   ")
    assert "13812345678" not in out.text and "[PHONE]" in out.text
    assert out.redactions == ("PHONE",)
    assert len(out.text) <= 40 + len("[PHONE]")
    plain = Cleaner(WriteSection(redact_pii=False))("  13812345678  ")
    assert plain.text == "13812345678" and plain.redactions == ()


def test_cleaner_rejects_a_zero_length_cap():
    with pytest.raises(ConfigError) as e:
        Cleaner(WriteSection.model_construct(max_chars=0, redact_pii=True))
    assert e.value.key == "write.max_chars"


def test_gate_rejects_chit_chat_unless_it_is_a_fact():
    gate = WriteGate(WriteSection())
    v = gate.judge("thanks!")
    assert v.reject == "chit_chat" and not v.scored
    assert gate.judge("thanks!", has_fact=True).reject is None


def test_gate_threshold_and_hint():
    # issue 16: below the threshold a statement is kept as an episodic memory, not rejected
    kept = WriteGate(WriteSection(threshold=0.75)).judge("we walked along the river")
    assert kept.reject is None and kept.below_threshold and kept.memory_type == MemoryType.EPISODIC
    gate = WriteGate(WriteSection(threshold=0.75, keep_below_threshold=False))
    low = gate.judge("we walked along the river")
    assert low.reject is not None and low.reject.startswith("below_threshold:") and low.scored
    assert low.memory_type == MemoryType.EPISODIC
    assert gate.judge("we walked along the river", hint=MemoryType.EPISODIC).reject is None
    strong = gate.judge("I prefer window seats on flights")
    assert strong.reject is None and strong.memory_type == MemoryType.SEMANTIC and strong.importance >= 0.8


def test_gate_sends_uncertain_statements_to_the_pool():
    v = WriteGate(WriteSection()).judge("maybe I will learn Rust next year?")
    assert v.reject is None and v.uncertain


def test_gate_checks_its_threshold():
    with pytest.raises(ConfigError):
        WriteGate(WriteSection.model_construct(threshold=1.5))


def test_build_record_derives_terms_tokens_source_and_dates(t0):
    rec = build_record("yesterday I called the landlord", tenant_id="t", user_id="u", memory_type=MemoryType.EPISODIC,
                       embedding_version="v1", ts=t0.timestamp(), role="assistant", now=t0)
    assert len(rec.id) == 16 and rec.source == Source.MODEL_INFERRED
    assert "landlord" in rec.terms and rec.tokens > 0
    assert rec.event_start is not None and rec.event_end is not None and rec.event_end <= t0.timestamp()
    assert rec.created_at == rec.updated_at == rec.last_access_at == t0.timestamp()
    undated = build_record("yesterday I called the landlord", tenant_id="t", user_id="u",
                           memory_type=MemoryType.EPISODIC, embedding_version="v1", ts=t0.timestamp(),
                           resolve_dates=False)
    assert undated.event_start is None and undated.source == Source.USER_STATED


def test_point_and_patches():
    rec = MemoryRecord(id=new_id(), tenant_id="t", user_id="u", content="c", memory_type=MemoryType.SEMANTIC,
                       terms=("tea",), access_count=2)
    p = point(rec, np.ones(4, dtype=np.float32))
    assert p.id == rec.id and p.dense == [1.0] * 4 and p.payload["memory_id"] == rec.id and p.sparse
    assert touch_patch(rec, 5.0) == {"access_count": 3, "last_access_at": 5.0}
    assert touch_patch(rec, 5.0, updated=True)["updated_at"] == 5.0
    d = deprecate_patch(7.0, superseded_by="x", metadata={"a": 1})
    assert d == {"status": MemoryStatus.DEPRECATED.value, "superseded_by": "x", "archived_at": 7.0, "archived": 1,
                 "updated_at": 7.0, "metadata": {"a": 1}}


@pytest.mark.parametrize(("a", "b", "same"), [
    ("order A123 shipped", "Order A123 shipped!", True),
    ("order A123 shipped", "order A124 shipped", False),
    ("I weigh 82 kg", "I weigh 78 kg", False),
    ("I like horror films", "I don't like horror films", False),
])
def test_identity_agreement(a, b, same):
    assert identity(a).agrees(identity(b)) is same


def test_subject_rule():
    rule = SubjectRule(WriteSection(supersede_similarity=0.5, supersede_keyword_overlap=0.5,
                                    supersede_strong_similarity=0.9))
    assert term_share({"tea", "green"}, {"tea"}) == 1.0 and term_share(set(), {"x"}) == 0.0
    assert rule.names(0.6, {"tea", "green"}, {"tea", "black"})
    assert not rule.names(0.4, {"tea"}, {"tea"})
    assert not rule.names(0.95, {"tea"}, {"coffee"})  # a correction must name the subject
    assert rule.related(0.95, {"tea"}, {"coffee"})  # strong similarity alone relates two statements
    assert not rule.related(0.6, {"tea"}, {"coffee"})


def test_stage_config_checks():
    with pytest.raises(ConfigError):
        SubjectRule(WriteSection.model_construct(supersede_similarity=1.2))
    with pytest.raises(ConfigError):
        Superseder(None, "archive", LifecycleSection.model_construct(confirm_repeats=0))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        DuplicateFinder(None, None, WriteSection.model_construct(dedup_similarity=-0.1))  # type: ignore[arg-type]
