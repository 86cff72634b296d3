"""A forget naming one thing of a multi-fact message removes only that thing (issue 16, failure
classes 6 and 9). On 1a67098 "forget my phone number" archived the whole message "my number is
138..., and leave parcels with the guard downstairs", taking the delivery note with it: data loss.
Now the clauses it does not name are kept as a new version, the old version is archived under the
undo window, the write result and its span say so, and undo brings the whole message back."""

from datetime import timedelta

import pytest

from memory_engine.write.forgetting import clause_spans


@pytest.mark.integration
@pytest.mark.parametrize("memory,ask,kept,gone", [
    ("my number is 13812345678, and leave parcels with the guard downstairs if I'm out",
     "forget my phone number please", "leave parcels with the guard downstairs", "number"),
    ("我手机号是13912345678，快递放楼下门卫那就行", "把我手机号删了吧", "快递放楼下门卫", "手机号"),
    ("I'm allergic to penicillin. my address is 12 Elm Street, apt 4 btw", "can you forget my address",
     "allergic to penicillin", "Elm"),
    ("我对花生过敏，还有我老婆叫李娜", "别记我老婆的名字了", "花生过敏", "李娜"),
])
def test_forget_keeps_what_it_does_not_name(engine, t0, forget_next_day, memory, ask, kept, gone):
    w, r = forget_next_day(memory, ask)
    assert r.outcome == "forgotten" and r.superseded_ids == (w.memory_id,)
    assert engine.memory(w.memory_id, user_id="u").status.value == "deprecated"
    ((old, new),) = r.redacted_versions
    assert old == w.memory_id and r.evidence[0]["kept_as"] == new
    rec = engine.memory(new, user_id="u")
    assert rec.status.value == "current" and kept in rec.content and gone not in rec.content
    assert rec.metadata["_redacted_from"] == w.memory_id
    hits = engine.retrieve(kept, user_id="u", now=t0 + timedelta(days=2)).hits
    assert [h.memory_id for h in hits][:1] == [new] and all(gone not in h.content for h in hits)


@pytest.mark.integration
def test_undo_restores_the_whole_message_once(engine, t0, forget_next_day):
    w, r = forget_next_day("my number is 13812345678, and leave parcels with the guard downstairs",
                   "forget my phone number")
    ((_, new),) = r.redacted_versions
    assert engine.undo_forget(user_id="u", now=t0 + timedelta(days=2)) == [w.memory_id]
    assert engine.memory(w.memory_id, user_id="u").status.value == "current"
    assert engine.memory(new, user_id="u").status.value == "deprecated"  # no second, partial copy


@pytest.mark.integration
@pytest.mark.parametrize("memory,ask", [
    ("我的健身房会员卡号是GYM88213", "会员卡号别记了"),  # one clause: the whole memory is what it names
    ("my address is 12 Elm Street, Shanghai", "forget my address"),  # 'Shanghai' continues the address
])
def test_whole_memory_goes_when_nothing_else_stands_alone(engine, t0, forget_next_day, memory, ask):
    w, r = forget_next_day(memory, ask)
    assert r.outcome == "forgotten" and r.superseded_ids == (w.memory_id,) and r.redacted_versions == ()


@pytest.mark.unit
def test_clause_spans_keep_numbers_whole():
    text = "rent is 4,200 a month, and the cat is Mochi. 好的，谢谢"
    assert [text[a:b] for a, b in clause_spans(text)] == [
        "rent is 4,200 a month,", " and the cat is Mochi.", " 好的，", "谢谢"]
