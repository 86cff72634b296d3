"""Defects found by the session-7 fresh-user trial (helper s7trial): minimal reproductions on the real
engine. Each is marked xfail(strict=True) until fixed, so a fix shows up as an XPASS to un-mark."""

from datetime import timedelta

import pytest


@pytest.mark.integration
@pytest.mark.parametrize("memory,ask,kept", [
    ("my email is bob@example.com and I prefer window seats", "please forget my email", "window seats"),
    ("My phone is 555-867-5309 and my wife Anna is allergic to shellfish", "forget my phone number", "shellfish"),
    ("call me at 13800138000 — also I'm lactose intolerant", "forget my number", "lactose intolerant"),
    ("我电话13700001111，生日是5月8号，喜欢吃辣", "手机号别记了", "喜欢吃辣"),
    ("My phone is 555-867-5309 and my sister and I share a Netflix account", "forget my phone number",
     "my sister and I share a Netflix account"),
])
def test_forget_keeps_unnamed_clause_without_comma(engine, t0, forget_next_day, memory, ask, kept):
    """Fixed: a forget naming one clause of a message joined by 'and' / a dash (no comma), or matched by
    topic while one clause carries its words ('phone' / the [PHONE] placeholder), archived the whole
    message. Now the rest is kept as a new version, and undo restores the whole message."""
    w, r = forget_next_day(memory, ask)
    assert r.outcome == "forgotten" and r.superseded_ids == (w.memory_id,)
    current = [m.content for m in engine.list_memories(user_id="u") if m.status.value == "current"]
    assert len(current) == 1 and kept in current[0] and "[PHONE]" not in current[0] and "[EMAIL]" not in current[0]
    assert engine.undo_forget(user_id="u", now=t0 + timedelta(days=2)) == [w.memory_id]
    current = [m.id for m in engine.list_memories(user_id="u") if m.status.value == "current"]
    assert current == [w.memory_id]


@pytest.mark.integration
@pytest.mark.parametrize("memory,ask,kept", [
    ("我在字节跳动上班，月薪三万，老家是湖南的", "把我工资那条删掉", "湖南"),
    ("我在字节跳动上班，月薪三万，老家是湖南的", "把我工资那条删掉", "字节跳动"),
    ("我电话13700001111，生日是5月8号，喜欢吃辣", "手机号别记了", "生日"),  # 喜欢吃辣 kept, the birthday not
])
def test_topic_forget_keeps_other_clauses(engine, t0, forget_next_day, memory, ask, kept):
    """Fixed: a forget matched by topic when no clause carries the target's words (工资 / 月薪) archived the whole
    multi-clause message; with a carrier (电话 [PHONE]) the clause margin took the birthday clause with it. Now
    月薪 carries 工资 by meaning and only a clause closer to the target than the carrier goes with it."""
    w, r = forget_next_day(memory, ask)
    assert r.outcome == "forgotten" and r.superseded_ids == (w.memory_id,)
    current = [m.content for m in engine.list_memories(user_id="u") if m.status.value == "current"]
    assert any(kept in c for c in current), current


@pytest.mark.integration
def test_correction_about_named_person_keeps_users_own_memory(engine, t0):
    """Fixed: 'correction: Tom lives in Houston, not Austin' retired the user's own 'I live in Austin'
    (people() read no English names); Tom's own memory is still the one it corrects."""
    own = engine.add("I live in Austin", user_id="u", now=t0)
    r = engine.add("correction: Tom lives in Houston, not Austin", user_id="u", now=t0 + timedelta(minutes=2))
    assert own.memory_id not in r.superseded_ids, r
    assert engine.memory(own.memory_id, user_id="u").status.value == "current"
    toms = engine.add("Tom lives in Austin", user_id="v", now=t0)
    r = engine.add("correction: Tom lives in Houston, not Austin", user_id="v", now=t0 + timedelta(minutes=2))
    assert r.superseded_ids == (toms.memory_id,), r


@pytest.mark.integration
def test_forget_my_salary_is_honoured(engine, t0, forget_next_day):
    """Fixed: 'forget my salary' on 'I work at Google. My salary is 200k. ...' was stored as a memory and the
    salary stayed: the stem 'salari' was not found in 'salary', so the kids of the last sentence made the
    memory look like one about relatives. Now the salary sentence goes and the other two stay."""
    w, r = forget_next_day("I work at Google. My salary is 200k. I have two kids.", "forget my salary")
    assert r.outcome == "forgotten", r
    hits = engine.retrieve("how much do I earn?", user_id="u", now=t0 + timedelta(days=2)).hits
    assert all("200k" not in h.content for h in hits)
    current = [m.content for m in engine.list_memories(user_id="u") if m.status.value == "current"]
    assert current == ["I work at Google. I have two kids."], current


@pytest.mark.integration
def test_repair_of_day_of_month(engine, t0):
    """Fixed: 'oops, I mean the 14th' after 'flying to Paris on the 12th' was stored beside it (its editing terms
    'oops' and 'mean' counted as two other content terms); both dates stayed current (write/repair.py EDITING_EN)."""
    w = engine.add("I'm flying to Paris on the 12th", user_id="u", session_id="s", now=t0)
    r = engine.add("oops, I mean the 14th", user_id="u", session_id="s", now=t0 + timedelta(minutes=1))
    assert r.superseded_ids == (w.memory_id,), r


@pytest.mark.integration
def test_new_employer_answers_where_do_i_work_now(engine, t0):
    """Fixed (session 9): the start links the employer it replaces in the same role ('at Alibaba' / 'at Tencent',
    write/changes.py metadata._succeeds) and a present-tense question uses that link (retrieve/stale.py)."""
    engine.add("I work at Alibaba", user_id="u", now=t0)
    engine.add("just started at Tencent last week", user_id="u", now=t0 + timedelta(days=60))
    hits = engine.retrieve("where do I work now?", user_id="u", now=t0 + timedelta(days=61)).hits
    assert hits and "Tencent" in hits[0].content, [h.content for h in hits]


@pytest.mark.integration
def test_ship_it_to_me_finds_address(engine, t0):
    # was xfail: a request with one content word ('ship') was never routed (intent.min_query_terms 2)
    a = engine.add("My address is 12 Elm Street, Springfield", user_id="u", now=t0)
    hits = engine.retrieve("ship it to me", user_id="u", now=t0 + timedelta(days=1)).hits
    assert a.memory_id in [h.memory_id for h in hits]


@pytest.mark.integration
def test_zh_sister_husband_hop(engine, t0):
    """Fixed: '我姐夫是做什么的' found nothing; 姐夫 (the sister's husband) is now read as its relation path
    (memory_engine/kinship.py), the marriage memory states it and the hop reaches his job through 张伟."""
    engine.add("我姐姐嫁给了张伟", user_id="u", now=t0)
    job = engine.add("张伟是个牙医", user_id="u", now=t0 + timedelta(days=10))
    hits = engine.retrieve("我姐夫是做什么的", user_id="u", now=t0 + timedelta(days=40)).hits
    assert job.memory_id in [h.memory_id for h in hits]


@pytest.mark.integration
@pytest.mark.xfail(strict=True, reason="reworded duplicate not merged: \"I'm vegetarian\" / \"I don't eat meat\". "
                   "Needs word knowledge the bundled models lack: e5 (rescaled) puts 'I'm vegetarian' nearer 'I eat "
                   "meat' (0.70) than 'I don't eat meat' (0.53), and not-duplicates higher still ('I'm vegan' 0.82, "
                   "'I don't drink alcohol' / 'I don't drink coffee' 0.79): no similarity threshold separates them "
                   "(session 9, s9h4); an offline NLI model or a gloss lexicon is the lever")
def test_vegetarian_reworded_merges(engine, t0):
    a = engine.add("I'm vegetarian", user_id="u", now=t0)
    b = engine.add("I don't eat meat", user_id="u", now=t0 + timedelta(minutes=3))
    assert b.outcome == "merged" and b.memory_id == a.memory_id, b


@pytest.mark.integration
def test_when_is_my_flight_finds_flying(engine, t0):
    """Fixed: 'when is my flight?' retrieved nothing for "I'm flying to Tokyo on Thursday" (flying / flight share
    no stem; dense below the floor). Keyword coverage now meets the word's family (retrieve/crosslang.py)."""
    m = engine.add("I'm flying to Tokyo on Thursday", user_id="u", now=t0)
    hits = engine.retrieve("when is my flight?", user_id="u", now=t0 + timedelta(hours=1)).hits
    assert m.memory_id in [h.memory_id for h in hits]


@pytest.mark.integration
def test_repair_without_session(engine, t0):
    """Fixed: without session_id (the README's plain add) 'I said Tuesday but I meant Thursday' two minutes
    later repaired nothing; a session-less repair does not reach a turn of a named session."""
    w = engine.add("Dentist appointment is on Tuesday at 3pm", user_id="u", now=t0)
    r = engine.add("I said Tuesday but I meant Thursday", user_id="u", now=t0 + timedelta(minutes=2))
    assert r.superseded_ids == (w.memory_id,), r
    s = engine.add("Haircut is on Tuesday at 5pm", user_id="u2", session_id="chat-1", now=t0)
    r2 = engine.add("I said Tuesday but I meant Thursday", user_id="u2", now=t0 + timedelta(minutes=2))
    assert s.memory_id not in r2.superseded_ids


@pytest.mark.integration
@pytest.mark.parametrize("text,day", [
    ("watched Dune 2 tonight, rated it 4/5", "2026-03-02"),  # tonight: the day it was written, not 5 April
    ("rated the new ramen place 4/5", None),
    ("scored 9/10 on the quiz", None),                        # not 10 September
    ("给这家店打了4/5分", None),
    ("Dinner with Tom on 3/6", "2026-03-06"),                 # still a date
    ("rated the hotel on 3/6 as excellent", "2026-03-06"),
])
def test_a_score_is_no_date(engine, t0, text, day):
    """Fixed: 'rated it 4/5' gave the memory an event time of 5 April (and 'scored 9/10' one of
    10 September), so date questions found it on the wrong day and missed it on the right one."""
    from datetime import datetime

    rec = engine.memory(engine.add(text, user_id="u", now=t0).memory_id, user_id="u")
    got = None if rec.event_start is None else datetime.fromtimestamp(rec.event_start, t0.tzinfo).date().isoformat()
    assert got == day
