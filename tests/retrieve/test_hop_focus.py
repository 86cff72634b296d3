"""Chain focus (retrieve/hop.py, ``retrieval.hop_chain_focus``): when the top hit is linked to another kept
memory, a kept memory linked to none of the chain and weaker than the top hit is about another subject that
shares the query's generic words, and drops out. Sentences differ from the golden suites'. Real in-memory
engine (bundled e5, qdrant-edge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_engine import MemoryEngine
from memory_engine.retrieve.hop import _split_in

T0 = datetime(2026, 4, 6, 9, tzinfo=UTC)


def _add(engine: MemoryEngine, user: str, texts: list[str]) -> dict[str, str]:
    return {t: engine.add(t, user_id=user, session_id=f"s{i}", now=T0 + timedelta(days=i)).memory_id
            for i, t in enumerate(texts)}


def test_a_separable_verb_split_in_the_query_is_the_querys_word():
    assert _split_in("上线", "新版为什么还上不了线？")
    assert _split_in("见面", "我们什么时候见个面")
    assert not _split_in("上线", "新版什么时候发布")
    assert not _split_in("app", "app 上不了线")  # a non-Chinese term is never split


def _chain(make_engine, focus: bool) -> tuple[list[str], dict[str, str]]:
    eng = make_engine({"retrieval.hop_chain_focus": focus})
    user = "focus-en"
    ids = _add(eng, user, [
        "Mochi has always gone to Dr. Patel",
        "Dr. Patel's practice is now at 22 Elm Road",
        "my dermatologist Dr. Gray is on Pine Street",
    ])
    res = eng.retrieve("where do I take Mochi for her shots?", user_id=user, now=T0 + timedelta(days=5))
    return [h.memory_id for h in res.hits], ids


def test_focus_drops_the_unlinked_memory_and_keeps_the_chain(make_engine):
    """On: the chain (cat -> vet -> address) stays, the user's own dermatologist, linked to it only through the
    title 'Dr.', goes. Off (the order before session 10) the dermatologist passes the floor and comes back."""
    got, ids = _chain(make_engine, True)
    assert set(list(ids.values())[:2]) <= set(got)
    assert ids["my dermatologist Dr. Gray is on Pine Street"] not in got
    off, ids_off = _chain(make_engine, False)
    assert set(list(ids_off.values())[:2]) <= set(off)
    assert ids_off["my dermatologist Dr. Gray is on Pine Street"] in off


def test_focus_leaves_single_answers_alone(make_engine):
    """No chain (the top hit links to no other kept memory): every memory that passed the floor stays."""
    eng = make_engine({"retrieval.hop_chain_focus": True})
    user = "focus-single"
    ids = _add(eng, user, ["I run every Tuesday and Thursday morning", "I swim on Sundays at the community pool"])
    res = eng.retrieve("what exercise do I do each week?", user_id=user, now=T0 + timedelta(days=3))
    base = make_engine({"retrieval.hop_chain_focus": False})
    _add(base, user, list(ids))
    res_b = base.retrieve("what exercise do I do each week?", user_id=user, now=T0 + timedelta(days=3))
    assert len(res.hits) == len(res_b.hits)


def _second_message(make_engine, share: float) -> tuple[list[str], dict[str, str]]:
    eng = make_engine({"retrieval.hop_chain_focus": True, "retrieval.hop_chain_focus_anchor_share": share})
    ids = _add(eng, "focus-second", [
        "这个月读书会的地点改到城西图书馆三楼",
        "城西图书馆每周一闭馆，别白跑",
        "我周六报名了读书会，要带上那本《活着》",
    ])
    res = eng.retrieve("读书会的地点在哪来着？", user_id="focus-second", now=T0 + timedelta(days=5))
    return [h.memory_id for h in res.hits], ids


def test_focus_keeps_a_second_message_about_the_subject(make_engine):
    """The anchor (names the question shares with the top hit) holds the subject (读书会) and the attribute asked
    (地点); the second message about the subject lacks the attribute and shares no link word outside the query.
    At the default share (any one anchor name) it stays beside the chain; at 1.0 (every anchor name, the rule
    before session 12) it is dropped."""
    got, ids = _second_message(make_engine, 0.0)
    assert set(ids.values()) <= set(got)
    strict, ids_s = _second_message(make_engine, 1.0)
    assert set(list(ids_s.values())[:2]) <= set(strict)
    assert ids_s["我周六报名了读书会，要带上那本《活着》"] not in strict


def test_focus_still_drops_the_off_subject_memory_at_the_default_share(make_engine):
    """The dermatologist holds no anchor name (Mochi): the default share keeps dropping it."""
    from memory_engine.config import RetrievalSection

    assert RetrievalSection().hop_chain_focus_anchor_share == 0.0
    got, ids = _chain(make_engine, True)
    assert ids["my dermatologist Dr. Gray is on Pine Street"] not in got
