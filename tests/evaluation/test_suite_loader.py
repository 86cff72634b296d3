"""Suite loader: every error kind names file, case id and field path; resolution of defaults and times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memory_engine.errors import SuiteError
from memory_engine.evaluation.suite import SuiteErrors, load_suite, load_suites, parse_time

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "suites"

GOOD = """\
suite: s1
defaults: {user: u1, tenant: t1, top_k: 3}
cases:
  - id: c1
    category: negation_constraint
    lang: zh
    tags: [must-pass]
    events:
      - id: m_a
        at: "2026-03-02T09:00:00+08:00"
        text: 别给我推游戏相关的内容
        fact: {key: content.games, value: blocked}
      - id: m_b
        at: "-3d"
        text: I finished the intro Python course last week.
      - text: no label, no time
    queries:
      - id: q1
        at: "+2h"
        text: 最近有什么新课程推荐？
        expect:
          relevant: [m_a]
          irrelevant: [m_b]
          fact: {content.games: blocked}
      - id: q2
        text: graded
        user: u2
        expect:
          relevant: {m_a: 2, m_b: 1}
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def messages(tmp_path: Path, text: str) -> list[str]:
    p = write(tmp_path, text)
    with pytest.raises(SuiteErrors) as ei:
        load_suite(p)
    assert isinstance(ei.value, SuiteError)
    return [str(e).replace(str(p), "F") for e in ei.value.errors]


def test_good_suite_resolves_defaults_and_times(tmp_path: Path) -> None:
    s = load_suite(write(tmp_path, GOOD))
    assert s.name == "s1" and s.n_queries == 2
    c = s.cases[0]
    assert c.must_pass and c.lang == "zh" and c.category == "negation_constraint"
    a, b, unlabeled = c.events
    anchor = datetime(2026, 3, 2, 9, tzinfo=timezone(timedelta(hours=8)))
    assert a.at == anchor and (a.user, a.tenant) == ("u1", "t1")
    assert a.fact == ("content.games", "blocked")
    assert b.at == anchor - timedelta(days=3)
    assert unlabeled.label == "event2" and unlabeled.at == b.at + timedelta(seconds=1)
    q1, q2 = c.queries
    assert q1.at == anchor + timedelta(hours=2) and q1.top_k == 3
    assert q1.relevant == {"m_a": 1.0} and q1.irrelevant == ("m_b",)
    assert q1.fact == {"content.games": "blocked"}
    assert q2.user == "u2" and q2.relevant == {"m_a": 2.0, "m_b": 1.0}
    assert q2.at == q1.at + timedelta(seconds=1)


def test_relative_only_case_uses_epoch(tmp_path: Path) -> None:
    text = """\
suite: rel
defaults: {user: u}
cases:
  - id: c
    category: x
    events: [{id: e, at: "-9d", text: hi there}]
    queries: [{id: q, at: "+30m", text: hi}]
"""
    s = load_suite(write(tmp_path, text), epoch=datetime(2026, 1, 1, tzinfo=UTC))
    assert s.cases[0].events[0].at == datetime(2025, 12, 23, tzinfo=UTC)
    assert s.cases[0].queries[0].at == datetime(2026, 1, 1, 0, 30, tzinfo=UTC)
    assert s.cases[0].lang == "unspecified"


def test_unknown_keys_named_with_case_and_path(tmp_path: Path) -> None:
    bad = GOOD.replace("irrelevant: [m_b]", "irrelevnt: [m_b]").replace("        fact: {key", "        facts: {key")
    assert messages(tmp_path, bad) == [
        "F: case c1: cases[0].events[0].facts: unknown key",
        "F: case c1: cases[0].queries[0].expect.irrelevnt: unknown key",
    ]


def test_duplicate_ids(tmp_path: Path) -> None:
    bad = GOOD.replace("id: m_b", "id: m_a").replace("id: q2", "id: q1")
    bad = bad.replace("relevant: {m_a: 2, m_b: 1}", "relevant: [m_a]").replace("irrelevant: [m_b]", "irrelevant: []")
    bad += bad[bad.index("  - id: c1") :]
    assert messages(tmp_path, bad) == [
        "F: case c1: cases[1].id: duplicate case id 'c1'",
        "F: case c1: cases[0].events[1].id: duplicate event id 'm_a'",
        "F: case c1: cases[0].queries[1].id: duplicate query id 'q1'",
        "F: case c1: cases[1].events[1].id: duplicate event id 'm_a'",
        "F: case c1: cases[1].queries[1].id: duplicate query id 'q1'",
    ]


def test_labels_referenced_but_never_defined(tmp_path: Path) -> None:
    bad = GOOD.replace("relevant: [m_a]", "relevant: [m_a, m_zz]").replace("irrelevant: [m_b]", "irrelevant: [m_yy]")
    assert messages(tmp_path, bad) == [
        "F: case c1: cases[0].queries[0].expect.relevant: label 'm_zz' is not defined by any event of the case",
        "F: case c1: cases[0].queries[0].expect.irrelevant: label 'm_yy' is not defined by any event of the case",
    ]


def test_bad_times(tmp_path: Path) -> None:
    bad = GOOD.replace('at: "-3d"', 'at: "3 days ago"').replace('at: "+2h"', 'at: "2026-03-02T09:00:00"')
    help_ = "expected ISO-8601 with offset (2026-03-02T09:00:00+08:00) or relative (-9d, +2h, +30m)"
    assert messages(tmp_path, bad) == [
        f"F: case c1: cases[0].events[1].at: bad time '3 days ago': {help_}",
        f"F: case c1: cases[0].queries[0].at: bad time '2026-03-02T09:00:00': no UTC offset; {help_}",
    ]


def test_other_value_errors(tmp_path: Path) -> None:
    bad = GOOD.replace("lang: zh", "lang: fr").replace("top_k: 3", "top_k: 0")
    bad = bad.replace("relevant: {m_a: 2, m_b: 1}", "relevant: {m_a: -1}")
    msgs = messages(tmp_path, bad)
    assert msgs == [
        "F: defaults.top_k: Input should be greater than or equal to 1",
        "F: case c1: cases[0].lang: Input should be 'zh', 'en' or 'mixed'",
        "F: case c1: cases[0].queries[1].expect.relevant: grade of 'm_a' must be >= 0, got -1.0",
    ]


def test_missing_user_and_category(tmp_path: Path) -> None:
    bad = GOOD.replace("defaults: {user: u1, tenant: t1, top_k: 3}", "defaults: {tenant: t1}")
    bad = bad.replace("    category: negation_constraint\n", "")
    msgs = messages(tmp_path, bad)
    assert "F: case c1: cases[0].events[0].user: user missing (set it on the event or in defaults)" in msgs
    assert "F: case c1: cases[0].queries[0].user: user missing (set it on the query or in defaults)" in msgs
    assert "F: case c1: cases[0].category: category missing (set it on the case or in defaults)" in msgs
    # q2 sets its own user
    assert not any("queries[1].user" in m for m in msgs)


def test_yaml_errors_and_duplicate_keys(tmp_path: Path) -> None:
    assert messages(tmp_path, "suite: [unclosed\n") == [
        "F: invalid YAML: line 2, column 1: did not find expected ',' or ']'"
    ]
    dup = GOOD.replace("    lang: zh\n", "    lang: zh\n    lang: en\n")
    assert messages(tmp_path, dup) == ["F: invalid YAML: line 7, column 5: duplicate key 'lang' (first at line 6)"]
    assert messages(tmp_path, "- a\n- b\n") == ["F: top level must be a mapping, got list"]


def test_load_suites_collects_all_files_and_duplicate_names(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.yaml")
    write(tmp_path, GOOD, "b.yaml")
    write(tmp_path, GOOD.replace("suite: s1", "suite: s3").replace("lang: zh", "lang: fr"), "c.yaml")
    with pytest.raises(SuiteErrors) as ei:
        load_suites([tmp_path])
    msgs = [str(e).replace(str(tmp_path) + "/", "") for e in ei.value.errors]
    assert msgs == [
        "c.yaml: case c1: cases[0].lang: Input should be 'zh', 'en' or 'mixed'",
        "b.yaml: suite: duplicate suite name 's1' (also in a.yaml)",
    ]
    (tmp_path / "empty").mkdir()
    with pytest.raises(SuiteErrors, match="no suite files found"):
        load_suites([tmp_path / "empty"])
    with pytest.raises(SuiteErrors, match="missing.yaml: cannot read: No such file or directory"):
        load_suites([tmp_path / "missing.yaml"])


def test_fixture_suites_load() -> None:
    suites = load_suites([FIXTURES])
    assert {s.name for s in suites} >= {"tiny-recall", "tiny-must-pass"}


def test_parse_time() -> None:
    assert parse_time("+90s") == timedelta(seconds=90)
    assert parse_time("-1w") == -timedelta(weeks=1)
    assert parse_time("2026-01-01T00:00:00Z") == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="bad time"):
        parse_time(5)
