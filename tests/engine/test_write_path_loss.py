"""Issue 16, write side: what the default write path (``MemoryEngine.add``) lost against
"every turn stored", mechanism by mechanism, on the real engine (qdrant-edge, bundled e5):
turns of one session written with one time lose their order; a dedup merge that drops
the words the new statement added; a long statement parked in the candidate pool for one
hedged sentence."""

from datetime import timedelta
from pathlib import Path

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


def test_a_hedge_in_a_long_message_governs_its_own_clause(engine, t0):
    # one 'I guess' sent the whole ramble, diagnosis included, to the candidate pool, where retrieval does not look
    ramble = ("so yeah the week was a blur honestly, work was nuts, we had that whole migration thing going on and "
              "nobody slept, then friday I ended up at my buddy's place and we watched the game, oh and I finally "
              "got diagnosed, it's celiac, so no more gluten for me I guess, anyway the game was a blowout lol")
    r = engine.add(ramble, user_id="u", now=t0)
    assert r.outcome == "stored"
    assert [h.memory_id for h in engine.retrieve("celiac", user_id="u", now=t0 + timedelta(days=1)).hits] == [r.memory_id]
    # a short guess is still a guess, commas or not
    assert engine.add("Maybe I should try yoga, not sure it helps", user_id="u", now=t0).outcome == "candidate"
    assert engine.add("maybe I'll go to Hangzhou next month, with my wife", user_id="u", now=t0).outcome == "candidate"


def test_a_hedge_reads_by_sentence_with_clauses_off(make_engine, t0):
    eng = make_engine(overrides={"write.hedge_clauses": 0})
    r = eng.add("work was nuts, then I got diagnosed, it's celiac, so no more gluten for me I guess", user_id="u", now=t0)
    assert r.outcome == "candidate"


def test_a_rounded_quantity_is_no_hedge(engine, t0):
    for text in ("我每天坐二号线去上班，大概四十分钟", "坐地铁到公司差不多半小时"):
        r = engine.add(text, user_id="u", now=t0)
        assert r.outcome == "stored", (text, r)
    hits = engine.retrieve("我怎么去上班", user_id="u", now=t0 + timedelta(days=1)).hits
    assert hits and "二号线" in hits[0].content
    # a hedged plan stays a candidate, numbers or not
    for text in ("我可能三月去杭州", "Maybe I'll run 10 km next week"):
        assert engine.add(text, user_id="u", now=t0).outcome == "candidate", text


def test_a_redacted_phone_or_email_is_still_found_by_its_value(engine, t0):
    from memory_engine.write.pii import fingerprints, redact

    r = engine.add("我上司的电话号是15372566054。", user_id="u", now=t0)
    m = engine.add("My cousin's email is zhang.wei@example.com", user_id="u", now=t0)
    engine.add("我上司的单位是杭州西湖银行支行。", user_id="u", now=t0)
    for res, value in ((r, "15372566054"), (m, "zhang.wei@example.com")):
        rec = engine.memory(res.memory_id, user_id="u")
        assert value not in repr(rec.to_payload())  # redacted, and no plain value anywhere in the payload
    later = t0 + timedelta(days=1)
    hits = engine.retrieve("那个电话号码是+86 153-7256-6054的人，他们单位叫什么？", user_id="u", now=later).hits
    assert hits and hits[0].memory_id == r.memory_id
    hits = engine.retrieve("who has the address Zhang.Wei@example.com?", user_id="u", now=later).hits
    assert hits and hits[0].memory_id == m.memory_id
    # two different numbers are two memories even though both read '[PHONE]'
    other = engine.add("我上司的电话号是13912345678。", user_id="u", now=later)
    assert other.outcome == "stored" and other.memory_id != r.memory_id
    # the terms are keyed: without the workspace's key they cannot be recomputed; passwords get none
    red = redact("电话 15372566054，密码是 abc123!")
    assert fingerprints(red, b"k1") != fingerprints(red, b"k2") and len(fingerprints(red, b"k1")) == 1
    assert fingerprints(red, b"") == ()


def test_redacted_value_search_terms_are_configuration(make_engine, t0):
    eng = make_engine({"pii.fingerprint_terms": False})
    eng.add("我上司的电话号是15372566054。", user_id="u", now=t0)
    rec = eng.retrieve("我上司的电话号", user_id="u", now=t0).hits[0]
    assert not any(t.startswith("pii") for t in eng.memory(rec.memory_id, user_id="u").terms)


def test_the_search_term_key_is_the_workspaces(make_engine, t0):
    a, b = make_engine(), make_engine()  # same workspace folder: the same secret, so old terms stay findable
    assert a._pii_key() == b._pii_key() != b""
    assert (Path(a.config.workspace) / "pseudonym.salt").exists()


def test_a_dialogue_written_without_metadata_keeps_speakers_apart(engine, t0):
    from memory_engine.write.correction import speaker_of

    old = engine.add("Maria: Thanks, John! Your words really mean a lot. It's always nice to know that what I'm "
                     "doing is making an impact.", user_id="u", session_id="s1", now=t0)
    new = engine.add("John: Lately, I've been stumped about something. Don't feel like I'm making much of an impact "
                     "here, which has me questioning my decisions and goals.", user_id="u", session_id="s2",
                     now=t0 + timedelta(days=30))
    assert new.superseded_ids == ()
    assert engine.memory(old.memory_id, user_id="u").status.value == "current"
    assert speaker_of(None, "Melanie: we went camping") == "melanie"
    assert speaker_of({"speaker": "Gina"}, "John: hi") == "gina"
    # a note header is no speaker, a URL no label
    assert speaker_of(None, "Update: my flight is at 8") == "" == speaker_of(None, "更正：航班是九点")
    assert speaker_of(None, "https://example.com is my blog") == ""
