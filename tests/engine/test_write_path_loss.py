"""Issue 16, write side: what the default write path (``MemoryEngine.add``) lost against
"every turn stored", mechanism by mechanism, on the real engine (qdrant-edge, bundled e5):
turns of one session written with one time lose their order; a dedup merge that drops
the words the new statement added; a long statement parked in the candidate pool for one
hedged sentence."""

from datetime import timedelta

import pytest

from memory_engine.errors import ConfigError
from memory_engine.store.base import StoreFilter

pytestmark = pytest.mark.integration


def _created(eng, ids):
    return [eng.memory(i, user_id="u").created_at for i in ids]


def test_turns_written_with_one_time_keep_their_order(engine, t0):
    turns = ["Melanie: We went camping at the lake last weekend", "Caroline: Did the kids like it?",
             "Melanie: They loved roasting marshmallows by the fire", "Caroline: That sounds lovely"]
    ids = [engine.add(t, user_id="u", session_id="s1", now=t0).memory_id for t in turns]
    at = _created(engine, ids)
    assert at == sorted(at) and len(set(at)) == len(at)  # arrival order, no ties
    assert at[-1] - at[0] < engine.config.write.session_order_window_s  # still the caller's time
    # the context stage reads the neighbours in that order: the turn right after the parent comes first
    rows = engine.store.scroll(StoreFilter("default", "u", session_id="s1", created_after=at[0]),
                               limit=2, order_by="created_at", descending=False)
    assert [r.id for r in rows] == ids[:2]


def test_distinct_times_and_other_sessions_are_untouched(engine, t0):
    a = engine.add("I adopted a cat named Luna", user_id="u", session_id="s1", now=t0).memory_id
    b = engine.add("I started pottery classes on Tuesdays", user_id="u", session_id="s1",
                   now=t0 + timedelta(minutes=5)).memory_id
    c = engine.add("We booked a cabin in the mountains", user_id="u", session_id="s2", now=t0).memory_id
    d = engine.add("My brother plays the clarinet", user_id="u", now=t0).memory_id  # no session
    got = _created(engine, [a, b, c, d])
    e = t0.timestamp()
    assert got == [e, e + 300, e, e]


def test_session_order_is_configuration(make_engine, t0):
    eng = make_engine({"write.session_order_window_s": 0})
    ids = [eng.add(t, user_id="u", session_id="s1", now=t0).memory_id
           for t in ("I run every morning before work", "My sister lives in Lisbon")]
    assert _created(eng, ids) == [t0.timestamp()] * 2
    bad = make_engine({"write.session_order_window_s": 1.0, "write.session_order_step_s": 2.0})
    with pytest.raises(ConfigError):  # the write pipeline is built on first use
        bad.add("I run every morning before work", user_id="u", session_id="s1", now=t0)


def test_a_statement_that_adds_words_is_not_merged_away(engine, t0):
    # the newer statement carries every word of the older one and one more: a merge would keep only the older
    first = engine.add("我妈妈是护士。", user_id="u", now=t0)
    second = engine.add("我妈妈是护士长。", user_id="u", now=t0 + timedelta(days=1))
    assert second.outcome == "stored" and second.memory_id != first.memory_id
    hits = engine.retrieve("谁是护士长？", user_id="u", now=t0 + timedelta(days=2)).hits
    assert any("护士长" in h.content for h in hits)
    # a repeat, or a restatement with no new word, still merges
    again = engine.add("我妈妈是护士长", user_id="u", now=t0 + timedelta(days=3))
    assert (again.outcome, again.memory_id) == ("merged", second.memory_id)


def test_a_review_with_one_hedged_sentence_is_kept_and_found(engine, t0):
    review = ("这西门子洗衣机我用得真是满意极了！用起来特别简单，洗得也干净，而且声音特别小。"
              "就是价格可能有点贵。")
    r = engine.add(review, user_id="u", now=t0)
    assert (r.outcome, r.memory_type) == ("stored", "episodic")
    hits = engine.retrieve("我用的洗衣机是什么牌子？", user_id="u", now=t0 + timedelta(days=1)).hits
    assert hits and hits[0].memory_id == r.memory_id
    # a guess as a whole still waits in the candidate pool
    assert engine.add("也许我会喜欢日料？要不试试", user_id="u", now=t0).outcome == "candidate"
    assert engine.add("Maybe I should try yoga. Not sure it helps?", user_id="u", now=t0).outcome == "candidate"
