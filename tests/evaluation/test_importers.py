"""Importers on the shared benchmark files: counts, normalised ids, every relevant label exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_engine.errors import SuiteError
from memory_engine.evaluation.importers import (
    import_locomo,
    import_longmemeval,
    import_memdaily,
    normalise_dia_ids,
    parse_locomo_time,
    parse_longmemeval_time,
    parse_memdaily_time,
)
from memory_engine.evaluation.suite import load_suites

pytestmark = pytest.mark.unit

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
LOCOMO = DATA / "locomo" / "locomo10_dev.json"
MEMDAILY = sorted((DATA / "memdaily").glob("*.json"))
LME = DATA / "longmemeval" / "longmemeval_oracle_1q_sample.json"

needs_data = pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/data not present")


def _all_labels_exist(out: Path) -> None:
    for s in load_suites([out]):
        for c in s.cases:
            labels = {e.label for e in c.events}
            for q in c.queries:
                assert set(q.relevant) <= labels, (s.name, c.id, q.id)


def test_normalise_dia_ids() -> None:
    assert normalise_dia_ids("D8:6; D9:17") == (["D8:6", "D9:17"], [])
    assert normalise_dia_ids("D:11:26") == (["D11:26"], [])
    assert normalise_dia_ids("D30:05") == (["D30:5"], [])
    assert normalise_dia_ids("D") == ([], ["D"])


def test_time_parsers() -> None:
    assert parse_locomo_time("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00+00:00"
    assert parse_memdaily_time("2024年04月01日 周一 08:30").isoformat() == "2024-04-01T08:30:00+08:00"
    assert parse_longmemeval_time("2023/05/25 (Thu) 20:21").isoformat() == "2023-05-25T20:21:00+00:00"


@needs_data
def test_locomo_counts(tmp_path: Path) -> None:
    raw = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns = sum(len(v) for s in raw for k, v in s["conversation"].items() if k.startswith("session_") and isinstance(v, list))
    rep = import_locomo(LOCOMO, tmp_path)
    assert len(rep.files) == 5 and rep.n_cases == 5
    assert rep.n_events == turns == 2760
    # 999 QA; conv-26 has two with empty evidence -> 997 queries with evidence
    assert rep.n_queries == 997
    assert "conv-26 qa[37] evidence 'D8:6; D9:17' -> ['D8:6', 'D9:17']" in rep.normalised
    assert "conv-43 qa[18] evidence 'D:11:26' -> ['D11:26']" in rep.normalised
    assert "conv-42 qa[58] evidence 'D10:19': no such turn" in rep.dropped
    assert "conv-42 qa[88] evidence 'D': unparseable ['D']" in rep.dropped
    _all_labels_exist(tmp_path)
    s = load_suites([tmp_path / "locomo-conv-26.yaml"])[0]
    c = s.cases[0]
    assert len(c.events) == 419 and len(c.queries) == 197
    assert c.events[0].label == "D1:1" and c.events[0].metadata == {"speaker": "Caroline", "session": 1}
    assert c.events[0].at.isoformat() == "2023-05-08T13:56:00+00:00"
    q37 = next(q for q in c.queries if q.id == "q37")
    assert set(q37.relevant) == {"D8:6", "D9:17"}
    assert {t for q in c.queries for t in q.tags} == {
        "locomo-cat-1:multi-hop", "locomo-cat-2:temporal", "locomo-cat-3:open-domain",
        "locomo-cat-4:single-hop", "locomo-cat-5:adversarial",
    }
    limited = import_locomo(LOCOMO, tmp_path / "one", limit=1)
    assert limited.n_cases == 1 and limited.n_queries == 197


@needs_data
def test_memdaily_counts(tmp_path: Path) -> None:
    # the shared folder grew from 2 to 8 files (dev data for issue 16): every file imports, nothing dropped
    every = import_memdaily(MEMDAILY, tmp_path / "all")
    assert len(every.files) == len(MEMDAILY) and every.dropped == [] and every.n_queries == every.n_cases
    two = [DATA / "memdaily" / "01_simple_events.json", DATA / "memdaily" / "02_conditional_events.json"]
    rep = import_memdaily(two, tmp_path / "two")
    assert len(rep.files) == 2 and rep.n_cases == 200 and rep.n_events == 1400 and rep.n_queries == 200
    assert rep.dropped == []
    _all_labels_exist(tmp_path / "two")
    s = {x.name: x for x in load_suites([tmp_path / "two"])}["memdaily-conditional_events"]
    c = s.cases[0]
    assert c.lang == "zh" and c.queries[0].relevant == {"m1": 1.0, "m3": 1.0}
    assert c.queries[0].at.isoformat() == "2024-04-04T07:26:00+08:00"
    # trajectories are different people
    assert len({c.events[0].user for c in s.cases}) == 100
    assert import_memdaily(MEMDAILY[0], tmp_path / "lim", limit=3).n_cases == 3


@needs_data
def test_longmemeval_counts(tmp_path: Path) -> None:
    rec = json.loads(LME.read_text(encoding="utf-8"))[0]
    turns = sum(len(s) for s in rec["haystack_sessions"])
    answers = sum(1 for s in rec["haystack_sessions"] for t in s if t.get("has_answer"))
    rep = import_longmemeval(LME, tmp_path)
    assert (rep.n_cases, rep.n_events, rep.n_queries) == (1, turns, 1)
    _all_labels_exist(tmp_path)
    c = load_suites([tmp_path])[0].cases[0]
    assert len(c.queries[0].relevant) == answers > 0
    assert [e.at for e in c.events] == sorted(e.at for e in c.events)
    # an _abs question becomes an abstention query
    abs_rec = dict(rec, question_id=rec["question_id"] + "_abs")
    (tmp_path / "abs.json").write_text(json.dumps([abs_rec]), encoding="utf-8")
    import_longmemeval(tmp_path / "abs.json", tmp_path / "abs")
    q = load_suites([tmp_path / "abs"])[0].cases[0]
    assert q.category == "abstention" and q.queries[0].empty is True and q.queries[0].relevant == {}


def test_bad_benchmark_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(SuiteError, match="cannot read benchmark JSON"):
        import_locomo(tmp_path / "bad.json", tmp_path / "out")


@needs_data
def test_non_ascii_suite_names_get_their_own_files(tmp_path: Path) -> None:
    """Issue 15: every non-ASCII suite name became ``x.yaml``, so suites overwrote each other."""
    import shutil

    src = tmp_path / "src"
    src.mkdir()
    for name in ("日常_一.json", "日常_二.json", "日常 二.json"):
        shutil.copy(MEMDAILY[0], src / name)
    rep = import_memdaily(sorted(src.glob("*.json")), tmp_path / "out", limit=2)
    assert len(set(rep.files)) == 3 and all(Path(f).exists() for f in rep.files)
    names = {s.name for s in load_suites([tmp_path / "out"])}
    assert names == {"memdaily-日常_一", "memdaily-日常_二", "memdaily-日常 二"}
    assert any("日常_一" in Path(f).name for f in rep.files)
