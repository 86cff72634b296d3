"""No raw PII on any persisted path (issue 15): PII written in zh and en through the public API - the
text, metadata and a fact of ``add``, the query of ``retrieve``, ``record_answer``, a dead letter - then
every persisted byte is scanned (shard files, the DuckDB file and every table, WAL, dead letters).

On main at 303e610: fact values 12/12, metadata 5/5, queries 24/24, answers 6/6 and dead letters 5/5 were
stored raw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_engine import EngineConfig, open_workspace

pytestmark = pytest.mark.integration

# (value as written, the digits/letters that must not survive in any form)
PII = [
    ("13812345678", "13812345678"),
    ("+44 20 7946 0958", "2079460958"),
    ("0086 139 8765 4321", "13987654321"),
    ("110101199003071233", "110101199003071233"),
    ("4111 1111 1111 1111", "4111111111111111"),
    ("zhang.wei@example.com", "zhang.wei@example.com"),
    ("AB 12 34 56 C", "AB123456C"),
    ("536-90-4399", "536904399"),
    ("DE89 3704 0044 0532 0130 00", "DE89370400440532013000"),
    ("１３６００１１２２３３", "13600112233"),
]
SECRET = "Hunter2pw!"


def _texts(value: str, i: int) -> tuple[str, str, str, dict, dict]:
    zh = i % 2 == 0
    text = f"我的联系方式是{value}，请记住" if zh else f"Please remember my contact: {value} for the account"
    query = f"{value} 是谁的号码" if zh else f"whose contact is {value}?"
    answer = f"您的联系方式是 {value} [mem-0000000000000000]" if zh else f"Your contact is {value}."
    return text, query, answer, {"contact": value, "nested": [{"v": value}]}, {"key": f"contact_{i}", "value": value}


def _variants(raw: str) -> set[bytes]:
    """The forms a raw value could be stored in: as written, without separators, JSON-escaped."""
    out = {raw, raw.replace(" ", "").replace("-", "")}
    out |= {json.dumps(v)[1:-1] for v in list(out)}
    return {v.encode() for v in out if len(v) >= 6}


@pytest.mark.slow  # measured 7-30 s on 2 shared cores; still runs in make test
def test_no_raw_pii_in_any_persisted_byte(embedder, tmp_path, caplog):
    ws = tmp_path / "ws"
    opened = open_workspace(EngineConfig(workspace=str(ws)), embedder=embedder)  # as every entry point does
    eng = opened.engine
    wh = opened.warehouse
    assert wh is not None
    for i, (value, _) in enumerate(PII):
        text, query, answer, meta, fact = _texts(value, i)
        eng.add(text, user_id=f"u{i % 3}", metadata=meta, fact=fact)
        res = eng.retrieve(query, user_id=f"u{i % 3}")
        eng.record_answer(res, answer)
    eng.add(f"my wifi password is {SECRET}", user_id="u0")
    eng.retrieve(f"the password is {SECRET}", user_id="u0")

    def broken(_eng, _reqs):
        raise OSError(f"disk full while writing {PII[0][0]}")

    w = eng.writer(apply=broken, max_attempts=1, backoff_s=0.0)
    for value, _ in PII[:5]:
        w.submit(f"记住我的号码 {value}", user_id="u9", metadata={"phone": value}, fact={"key": "p", "value": value})
    assert w.close(timeout=30)
    assert w.stats().dead_lettered == 5
    eng.flush()

    # every warehouse table, every column, as text
    leaks: list[str] = []
    tables = [r[0] for r in wh.fetchall("SELECT table_name FROM information_schema.tables WHERE table_schema='main'")]
    assert {"spans", "retrievals", "writes", "answers"} <= set(tables)
    wanted = [(raw, v) for raw, core in PII for v in _variants(raw) | _variants(core)] + [
        (SECRET, SECRET.encode())]  # fmt: skip
    for t in tables:
        rows = wh.fetchall(f'SELECT * FROM "{t}"')
        blob = "\n".join(repr(r) for r in rows).encode()
        leaks += [f"{t}: {raw}" for raw, v in wanted if v in blob]
    n_spans = wh.count_spans()
    opened.close()

    # every byte of every file in the workspace (shards, WAL, DuckDB file, dead letters)
    files = [p for p in Path(ws).rglob("*") if p.is_file()]
    assert any(p.name == "dead_letters.jsonl" for p in files) and any(p.suffix == ".duckdb" for p in files)
    for p in files:
        data = p.read_bytes()
        leaks += [f"{p.relative_to(ws)}: {raw}" for raw, v in wanted if v in data]
    leaks += [f"log: {raw}" for raw, v in wanted if v in caplog.text.encode()]
    assert n_spans >= 3 * len(PII)
    assert leaks == [], f"{len(set(x.split(': ', 1)[1] for x in leaks))} of {len(PII) + 1} raw values found: {leaks[:10]}"


# (what the user says, the secret that must not persist, a query by its other words, what must be kept)
IN_CHAT = [
    ("fyi the door code for the building is 739184, the buzzer is broken", "739184", "is the buzzer broken",
     "the buzzer is broken"),
    ("here's my OpenAI key sk-proj-4fJ8kLmN2pQr7sTuVwXy9zAbCdEf1gHiJk, use it for the summarizer",
     "4fJ8kLmN2pQr7sTuVwXy9zAbCdEf1gHiJk", "which key does the summarizer use", "use it for the summarizer"),
    ("我的网银登录密码是Zhang@1988!，U盾放在书房抽屉里", "Zhang@1988", "U盾放在哪", "U盾放在书房抽屉里"),
]


@pytest.mark.slow  # one workspace, a few writes: ~5-15 s on 2 shared cores
def test_secrets_pasted_in_chat_and_the_answer_to_a_question_never_persist(embedder, tmp_path):
    """Issue 16 class 8: the secrets of eval_sets/pii_in_the_wild.yaml through the public API, and a PIN given
    in the turn after the assistant asked for it ('What's the alarm code?' -> "it's 604817, ..."): no byte of
    the workspace holds them, and each memory is still found by its other words. On main at 67a107e all four
    were stored raw."""
    ws = tmp_path / "ws"
    opened = open_workspace(EngineConfig(workspace=str(ws)), embedder=embedder)
    eng = opened.engine
    for text, *_ in IN_CHAT:
        assert eng.add(text, user_id="u1", session_id="s1").outcome == "stored"
    eng.add("Sure, I can note it for the babysitter. What's the alarm code?", user_id="u1", session_id="s2",
            role="assistant")
    reply = eng.add("it's 604817, and she should disarm it within 30 seconds of opening the door", user_id="u1",
                    session_id="s2")
    assert reply.outcome == "stored" and "ACCESS_CODE" in reply.redactions
    for _, secret, query, kept in IN_CHAT:
        hits = eng.retrieve(query, user_id="u1").hits
        assert any(kept in h.content for h in hits), (query, [h.content for h in hits])
        assert all(secret not in h.content for h in hits)
    hits = eng.retrieve("how fast must the babysitter disarm the alarm", user_id="u1").hits
    assert any("disarm it within 30 seconds" in h.content for h in hits)  # the rest of the answer is kept
    eng.flush()
    opened.close()
    leaks = [(p.name, s) for p in Path(ws).rglob("*") if p.is_file()
             for s in [x[1] for x in IN_CHAT] + ["604817"] if s.encode() in p.read_bytes()]  # fmt: skip
    assert leaks == []
