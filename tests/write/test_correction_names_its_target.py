"""A correction archives the memory that states what it negates, not every memory of its subject, and an
admitted slip ('说错了', '记错了', 'my mistake') is a correction marker (fresh-user trial, session 5).

On main before this change '我搞错了，我老婆叫王芬，不叫王芳' archived '我老婆喜欢吃辣' too (a memory whose one
countable term is the subject counted as fully restated), '搞错了，航班是9号不是8号' archived '航班是早上七点的'
(any negation counted), and '说错了，…' / '记错了，…' / 'Oops, my mistake - …' retired nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import MemoryEngine

pytestmark = pytest.mark.integration

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)

CASES = [
    (["我老婆叫王芳", "我老婆喜欢吃辣"], "我搞错了，我老婆叫王芬，不叫王芳"),
    (["我老婆叫王芳", "我老婆喜欢吃辣"], "说错了，我老婆叫王芬，不叫王芳"),
    (["我的航班是12月8号", "航班是早上七点的"], "搞错了，航班是9号不是8号"),
    (["我的航班是12月8号", "航班是早上七点的"], "记错了，航班是9号不是8号"),
    (["My flight is on December 8", "My flight leaves from terminal two"],
     "Oops, my mistake - the flight is on December 9, not the 8th"),
    (["My flight is on December 8", "My flight leaves from terminal two"],
     "Correction: the flight is on December 9, not the 8th"),
    # English admitted slips beside 说错 / 记错 (red-team round 5 K05: no marker, nothing retired)
    (["Our anniversary is on May 12", "I work in insurance", "I live in Nashville"],
     "sorry I got that wrong earlier, our anniversary is May 21 not the 12th"),
    (["My flight is on December 8", "My flight leaves from terminal two"],
     "I misspoke, the flight is on December 9, not the 8th"),
]
# a contrast ('X, not Y') beside another marker restates only the corrected value: an older memory holding more
# (王医生, seat 32A) is linked and outranked, never archived (session 19 red-team: 'Correction: the Berlin flight is
# June 14, not June 12' archived the airline, the seat and the conference with the date)
LINKED = [
    # fresh-user trial, session 6: the other memory shares only the replaced day; both were archived
    (["我跟王医生约了周二上午看牙", "周二晚上还要去参加表弟的婚礼"], "刚才说错了，看牙是周四上午，不是周二", "看牙是哪天？"),
    (["My flight to Osaka is on November 12th, seat 32A", "Book club meets on November 12th at Mia's place"],
     "Correction: my flight to Osaka is on the 14th, not the 12th", "when is my Osaka flight?"),
    (["I'm flying to Berlin on June 12 with Lufthansa, window seat, for a conference", "I ride my bike to work"],
     "Correction: the Berlin flight is June 14, not June 12", "when do I fly to Berlin?"),
    (["我下周五坐高铁去武汉出差，住汉口的全季酒店，顺便看望大学室友", "我每天骑车上班"], "更正一下，去武汉是下周六，不是下周五",
     "我哪天去武汉？"),
]


@pytest.fixture(scope="module")
def engine():
    eng = MemoryEngine.in_memory()
    yield eng
    eng.close()


@pytest.mark.parametrize("olds,correction", CASES)
def test_the_correction_retires_the_memory_it_names_and_keeps_the_other(engine, olds, correction):
    user = f"u-{abs(hash(correction)) % 10**8}"
    ids = [engine.add(t, user_id=user, session_id="s1", now=T0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(olds)]
    res = engine.add(correction, user_id=user, session_id="s2", now=T0 + timedelta(days=2))
    assert res.outcome == "stored"
    assert res.superseded_ids == (ids[0],), (correction, res.superseded_ids, res.evidence)
    assert res.evidence[0]["basis"] in ("negation", "replaced", "restatement")


@pytest.mark.parametrize("olds,correction,question", LINKED)
def test_a_contrast_beside_a_marker_links_a_richer_memory_and_archives_nothing(engine, olds, correction, question):
    user = f"u-{abs(hash(correction)) % 10**8}"
    ids = [engine.add(t, user_id=user, session_id="s1", now=T0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(olds)]
    res = engine.add(correction, user_id=user, session_id="s2", now=T0 + timedelta(days=2))
    assert res.outcome == "stored" and res.superseded_ids == (), (correction, res.evidence)
    assert [(e["id"], e["rule"], e["archived"]) for e in res.evidence] == [(ids[0], "corrects", False)]
    assert all(engine.memory(i, user_id=user).status.value == "current" for i in ids)  # nothing lost
    got = [h.memory_id for h in engine.retrieve(question, user_id=user, now=T0 + timedelta(days=3)).hits]
    assert got[0] == res.memory_id, got  # the correction answers; the older memory ranks below it
    assert ids[0] not in got or got.index(ids[0]) > got.index(res.memory_id)


def test_a_slip_of_the_tongue_about_something_else_retires_nothing(engine):
    ids = [engine.add(t, user_id="u-slip", session_id="s1", now=T0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(["我喜欢爬山", "我在银行上班"])]
    res = engine.add("今天开会说错话了，被老板批评了", user_id="u-slip", session_id="s2", now=T0 + timedelta(days=1))
    assert res.superseded_ids == ()
    got = engine.retrieve("我喜欢什么运动", user_id="u-slip", now=T0 + timedelta(days=2))
    assert ids[0] in [h.memory_id for h in got.hits]


def test_the_memory_a_correction_keeps_has_its_reason_in_the_debug_log(engine, caplog):
    """The supersession loop judges each older memory in one place (supersede.CorrectionFinder.evidence_basis):
    what it keeps, it keeps for a reason the debug log names; what it archives carries its basis."""
    user = "u-reason"
    olds = ["我的航班是12月8号", "航班是早上七点的"]
    ids = [engine.add(t, user_id=user, session_id="s1", now=T0 + timedelta(minutes=i)).memory_id
           for i, t in enumerate(olds)]
    with caplog.at_level("DEBUG", logger="memory_engine.write.supersede"):
        res = engine.add("搞错了，航班是9号不是8号", user_id=user, session_id="s2", now=T0 + timedelta(days=2))
    assert res.superseded_ids == (ids[0],) and res.evidence[0]["span"]
    reasons = [r.getMessage() for r in caplog.records if ids[1] in r.getMessage()]
    assert reasons and all("does not retire" in m for m in reasons), reasons
    assert not any(ids[0] in r.getMessage() for r in caplog.records)


def test_a_correction_naming_the_old_identifier_links_that_memory(engine):
    """Red-team round 6 C14b: '上次说错了，航班号是MU5101，不是MU5103' linked nothing ('different identifiers', then no
    shared subject word with '我周五坐MU5103去北京'); the replaced value names the memory's identifier, which is the
    subject. The memory holds more (周五, 北京), so it is linked and outranked, never archived."""
    user = "u-flight-ident"
    old = engine.add("我周五坐MU5103去北京", user_id=user, session_id="s1", now=T0).memory_id
    other = engine.add("我在东航上班", user_id=user, session_id="s1", now=T0 + timedelta(minutes=1)).memory_id
    res = engine.add("上次说错了，航班号是MU5101，不是MU5103", user_id=user, session_id="s2", now=T0 + timedelta(days=2))
    assert res.superseded_ids == () and [(e["id"], e["rule"]) for e in res.evidence] == [(old, "corrects")]
    assert all(engine.memory(i, user_id=user).status.value == "current" for i in (old, other))
    got = [h.memory_id for h in engine.retrieve("我坐哪个航班去北京", user_id=user, now=T0 + timedelta(days=3)).hits]
    assert got[0] == res.memory_id and got.index(old) > 0
