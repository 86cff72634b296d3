"""retrieve/answers.py: a 'when' question ranks a memory stating a time above one that states none."""
from memory_engine.config import EngineConfig
from memory_engine.retrieve.answers import TimeAnswers, asks_time, states_time
from memory_engine.retrieve.fusion import Candidate

WORDS = EngineConfig().retrieval.time_question_words


def _ta(discount: float = 0.95) -> TimeAnswers:
    return TimeAnswers(discount, 0.5, WORDS)


def test_asks_time_present_not_past() -> None:
    p = _ta().pattern
    assert asks_time("when is the plumber coming?", p)
    assert asks_time("搬家是哪天？", p)
    assert not asks_time("when did I go to Paris?", p)
    assert not asks_time("我以前什么时候上班？", p)
    assert not asks_time("where do I live?", p)


def test_states_time_past_event_does_not_count() -> None:
    assert states_time({"content": "Dave texted back, Friday 10am works for him", "created_at": 100.0})
    assert states_time({"content": "婚礼定在6月8号", "event_start": 500_000.0, "created_at": 100.0})
    assert not states_time({"content": "he fixed our water heater last year", "event_start": 0.0,
                            "event_end": 1000.0, "created_at": 9_000_000.0})
    assert not states_time({"content": "搬家公司是在货拉拉上找的", "created_at": 100.0})


def test_timeless_capped_below_timed_and_off_switch() -> None:
    who = Candidate("who", similarity=0.8, fused=0.76)
    final = Candidate("final", similarity=0.7, fused=0.44)
    pl = {"who": {"content": "the plumber is Dave from Rooter Pros"},
          "final": {"content": "Dave texted back, Friday 10am works for him"}}
    out = _ta().apply("when is the plumber coming?", [who, final], pl, 1, 2)
    assert [c.memory_id for c in out] == ["final", "who"]
    # nothing named, nothing moved: a past question, and the switch off
    assert _ta().apply("when did the plumber come?", [who, final], pl, 1, 2) == [who, final]
    assert _ta(1.0).apply("when is the plumber coming?", [who, final], pl, 1, 2) == [who, final]


def test_a_time_in_a_statement_before_a_question_counts() -> None:
    assert states_time({"content": "The earliest is UA 512, leaving 6:40am. Should I grab it?", "created_at": 1.0})
    assert not states_time({"content": "can you come Friday?", "created_at": 1.0})


def test_a_stale_timed_candidate_is_no_best_answer() -> None:
    old = Candidate("old", similarity=0.86, fused=0.70)  # '晚上八点去健身房', ranked below the flip back
    back = Candidate("back", similarity=0.69, fused=0.74)  # '还是晚上去健身吧' states no clock time
    pl = {"old": {"content": "我一般下班后晚上八点去健身房"}, "back": {"content": "还是晚上去健身吧，早上实在起不来"}}
    assert [c.memory_id for c in _ta().apply("我一般几点去健身？", [back, old], pl, 1, 2, {"old": "back"})] == ["back", "old"]
    assert [c.memory_id for c in _ta().apply("我一般几点去健身？", [back, old], pl, 1, 2)] == ["old", "back"]
