"""Aggregates, the CI gate and the reports on plain-data runs (no engine)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _eval_runs import case, query, run, write

from memory_engine.evaluation.aggregate import summarize, write_stats
from memory_engine.evaluation.ci import BaselineError, compare, load_baseline, make_baseline, save_baseline
from memory_engine.evaluation.reports import (
    render_html,
    render_junit,
    render_markdown,
    render_table,
    run_to_dict,
)

pytestmark = pytest.mark.unit


def sample_run(ranked_b: list[str] | None = None, **kw):  # noqa: ANN003, ANN201
    qa = query("qa", ["a", "x", "y"], ["a"])  # rr 1, recall 1
    qb = query("qb", ranked_b or ["x", "b", "y"], ["b"])  # rr 1/2
    qc = query("qc", ["z", "w", "c2"], ["c", "c2"], case="c2", category="cat_b", **kw)  # recall 1/2, rr 1/3
    return run([case([qa, qb]), case([qc], must_pass=kw.get("must_pass", False))])


def test_aggregates_by_hand() -> None:
    s = summarize(sample_run())
    assert s.overall.n_queries == 3
    assert s.overall.means["mrr"] == pytest.approx((1 + 0.5 + 1 / 3) / 3)
    assert s.overall.means["recall@k"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert s.overall.means["pass"] == pytest.approx(2 / 3)
    assert s.by_category["cat_a"].means["mrr"] == pytest.approx(0.75)
    assert s.by_category["cat_b"].means["recall@k"] == pytest.approx(0.5)
    assert s.cases_passed == 1 and s.n_cases == 2
    assert s.miss_kinds == {"outranked": 1}


def test_write_stats_by_hand() -> None:
    writes = (
        write("a", "stored", "stored"),
        write("b", "stored", "merged", duplicate=True),
        write("c", "rejected", "rejected"),
        write("d", "merged"),
        write("e", "stored", superseded=(("a", "right"), ("x", "wrong"))),
    )
    ws = write_stats([case([query("q", ["a"], ["a"])], writes=writes)])
    assert ws.n_events == 5
    assert ws.outcomes == {"stored": 3, "merged": 1, "rejected": 1, "candidate": 0}
    assert ws.shares["stored"] == pytest.approx(0.6)
    assert (ws.expect_write_total, ws.expect_write_ok) == (3, 2)
    assert (ws.supersessions_right, ws.supersessions_wrong, ws.duplicates_stored) == (1, 1, 1)
    c = case([query("q", ["a"], ["a"])], writes=writes)
    assert not c.passed  # b was expected to merge


def test_gate_passes_against_its_own_baseline(tmp_path: Path) -> None:
    r = sample_run()
    save_baseline(r, tmp_path / "b" / "base.json")
    base = load_baseline(tmp_path / "b" / "base.json")
    out = compare(r, base)
    assert out.exit_code == 0 and out.reasons == ()
    d = next(d for d in out.deltas if d.group == "all" and d.metric == "mrr")
    assert d.delta == 0.0 and d.interval is not None and d.interval.low == 0.0


def test_gate_fails_on_regression_against_doctored_baseline() -> None:
    r = sample_run()
    base = make_baseline(r)
    base["groups"]["category:cat_b"]["recall@k"] = 0.9  # doctored: now 0.5
    for key in base["queries"]:
        base["queries"][key]["recall@k"] = 1.0
    out = compare(r, base, max_drop=0.02)
    assert out.exit_code == 1
    assert out.reasons == ("category:cat_b recall@k dropped 0.900 -> 0.500 (more than 0.02)",)
    reg = out.regressions[0]
    assert reg.interval is not None and reg.interval.n == 1  # one paired query in cat_b
    # a tolerance wider than the drop passes
    assert compare(r, base, max_drop=0.5).exit_code == 0
    # accepting a new baseline reports the drop without failing
    out2 = compare(r, base, fail_on_regression=False)
    assert out2.exit_code == 0 and out2.regressions


def test_gate_fails_on_must_pass_violation_and_leak() -> None:
    assert compare(sample_run(must_pass=True), None).reasons == ("must-pass case failed: s/c2",)
    viol = run([case([query("q", ["a", "bad"], ["a"], irrelevant=["bad"])])])
    assert compare(viol, None).reasons == ("1 irrelevant violation(s)",)
    leak = run([case([query("q", ["a"], ["a"], leaks=("110101199003071234",))])])
    out = compare(leak, None)
    assert out.exit_code == 1 and out.reasons == ("1 not_contains leak(s)",)


def test_a_known_gap_reports_its_irrelevant_label_without_failing_the_gate_but_never_a_leak() -> None:
    from dataclasses import replace

    gap = replace(query("q", ["a", "bad"], ["a"], irrelevant=["bad"]), tags=("known-gap",))
    out = compare(run([case([gap])]), None)
    assert out.exit_code == 0 and out.reasons == ()
    assert summarize(run([case([gap])])).overall.irrelevant_violations == 1  # still counted and shown
    leak = replace(query("q", ["a"], ["a"], leaks=("110101199003071234",)), tags=("known-gap",))
    assert compare(run([case([leak])]), None).reasons == ("1 not_contains leak(s)",)


def test_baseline_errors(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="baseline file not found"):
        load_baseline(tmp_path / "none.json")
    (tmp_path / "x.json").write_text("{", encoding="utf-8")
    with pytest.raises(BaselineError, match="cannot read baseline"):
        load_baseline(tmp_path / "x.json")
    (tmp_path / "y.json").write_text(json.dumps({"format": "other"}), encoding="utf-8")
    with pytest.raises(BaselineError, match="not a memwb baseline"):
        load_baseline(tmp_path / "y.json")


def test_junit_parses_one_testcase_per_query() -> None:
    r = sample_run()
    root = ET.fromstring(render_junit(r).split("\n", 1)[1])
    cases = root.findall(".//testcase")
    assert len(cases) == 3
    assert root.get("failures") == "1"
    failed = [c for c in cases if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [("s.c2", "qc")]
    assert "missed c: outranked: test" in failed[0].find("failure").text  # type: ignore[union-attr]


def test_markdown_report_shows_deltas_and_failed_cases() -> None:
    r = sample_run()
    base = make_baseline(r)
    base["groups"]["all"]["mrr"] = 0.9
    md = render_markdown(r, compare(r, base))
    assert "## memwb eval — ❌ fail" in md
    assert "| group | metric | baseline | now | Δ [95% CI] | verdict |" in md
    assert "| all | mrr | 0.900 | 0.611 |" in md and "**regressed**" in md
    assert "<code>s/c2/qc</code>" in md
    # expected labels next to the ranked retrieved contents; pipes escaped
    assert "| c | – | | 1 | content of z <b> (z) | 1.000 |" in md
    assert "question qc \\| pipes" not in md  # summary uses html escaping, not table cells
    assert "`c` missed: outranked: test" in md
    plain = render_markdown(r)
    assert "| all | 3 |" in plain


def test_markdown_lists_only_changed_rows_and_never_says_regressed_and_noise_in_two_columns() -> None:
    """Before: 76 rows of +0.000 when nothing changed, and 'regressed | →' on a regressed row."""
    r = sample_run()
    same = render_markdown(r, compare(r, make_baseline(r)))
    assert "No metric changed against the baseline" in same and "+0.000" not in same
    base = make_baseline(r)
    base["groups"]["all"]["mrr"] = 0.9
    md = render_markdown(r, compare(r, base))
    rows = [line for line in md.splitlines() if line.startswith("| all | mrr")]
    assert len(rows) == 1 and "| → |" not in rows[0]
    assert "1 of" in md and "(1 regressed)" in md
    assert "| +0.000" not in md  # no unchanged row


def test_html_is_self_contained_and_table_and_json() -> None:
    r = sample_run()
    html = render_html(r, compare(r, make_baseline(r)))
    assert html.startswith("<!doctype html>")
    assert "<script src=" not in html and "Plotly.newPlot" in html  # plotly.js inlined, no CDN
    assert "Metrics by category" in html and "&lt;b&gt;" in html
    t = render_table(r)
    assert "category:cat_b" in t and "cases passed 1/2" in t
    # the terminal names each failed query with why-not, not only the Markdown report
    assert "failed queries (1):" in t and "s/c2/qc" in t and "c outranked" in t
    d = run_to_dict(r)
    json.dumps(d)
    assert d["cases"][1]["passed"] is False and d["cases"][0]["queries"][0]["key"] == "s/c1/qa"


def test_a_known_gap_query_that_flips_does_not_move_the_metric_gate_but_any_other_query_does() -> None:
    from dataclasses import replace

    # a category of two: the known-gap query passes in the baseline and misses now (its memory fell from
    # rank 5 to 6); without the tag that is a pass drop of 0.5 and the gate fails
    ok = query("q_ok", ["a"], ["a"])
    edge_then, edge_now = query("q_edge", ["b"], ["b"]), query("q_edge", ["x"], ["b"])
    gap_then, gap_now = (replace(q, tags=("known-gap",)) for q in (edge_then, edge_now))
    base = make_baseline(run([case([ok, gap_then])]))
    out = compare(run([case([ok, gap_now])]), base)
    assert out.exit_code == 0, out.reasons
    assert all(not d.regressed for d in out.deltas) and out.deltas  # the gated query is still compared
    base = make_baseline(run([case([ok, edge_then])]))
    out = compare(run([case([ok, edge_now])]), base)
    assert out.exit_code == 1 and any("pass dropped" in r for r in out.reasons)


def test_a_run_of_some_suites_is_compared_with_the_baselines_values_of_the_same_queries() -> None:
    """Trial finding (session 10): `memwb ci one_suite.yaml --baseline all.json` compared the suite's means with
    the whole baseline's and failed unchanged code ('all pass dropped 0.898 -> 0.727')."""
    good = case([query("q_good", ["a"], ["a"])])
    weak = case([query("q_weak", ["x", "y"], ["b"], case="c_weak")])  # misses, in the baseline and now
    base = make_baseline(run([good, weak]))
    out = compare(run([weak]), base)
    assert out.exit_code == 0, out.reasons
    d = next(d for d in out.deltas if d.group == "all" and d.metric == "pass")
    assert d.baseline == 0.0 and d.now == 0.0
    # the same subset that really drops still fails
    worse = compare(run([case([query("q_good", ["x"], ["a"])])]), base)
    assert worse.exit_code == 1 and any("pass dropped 1.000 -> 0.000" in r for r in worse.reasons)
