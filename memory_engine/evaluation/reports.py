"""Reports of an evaluation run: JSON, plain table, Markdown (pull-request
comment), self-contained HTML with Plotly charts, and JUnit XML (one testcase
per query).

Renderers are pure: ``(EvalRun, CiOutcome | None) -> str``; writing files is
the caller's job.
"""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .aggregate import SUMMARY_METRICS, Aggregate, Summary, summarize, to_jsonable
from .ci import CiOutcome, MetricDelta
from .quality import calibration_figure, calibration_frame, quality_figures, render_quality
from .runner import EvalRun, QueryResult

#: Characters of memory content shown per retrieved hit in reports.
SNIPPET_CHARS = 120


def _fmt(v: float | None, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _snip(s: str, n: int = SNIPPET_CHARS) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def arrow(d: MetricDelta) -> str:
    """``↑``/``↓`` when the paired interval excludes 0, ``→`` when the change may be noise."""
    iv = d.interval
    if iv is None or iv.low is None or iv.high is None:
        return "→" if not d.delta else ("↑" if d.delta > 0 else "↓")
    if iv.low > 0:
        return "↑"
    if iv.high < 0:
        return "↓"
    return "→"


def changed_delta(d: MetricDelta) -> bool:
    """True when the metric moved (|Δ| > 1e-9) or appeared/disappeared against the baseline."""
    if d.delta is None:
        return (d.baseline is None) != (d.now is None)
    return abs(d.delta) > 1e-9


def delta_verdict(d: MetricDelta) -> str:
    """One reading of a delta row, never contradicting itself (a regressed row used to say ``→``)."""
    a = arrow(d)
    if d.regressed:
        if a == "↓":
            return "**regressed** ↓ (significant drop beyond max-drop)"
        return "**regressed**: dropped beyond max-drop, but the interval includes 0 (may be noise)"
    if a == "↑":
        return "↑ better (significant)"
    if a == "↓":
        return "↓ worse (significant, within max-drop)"
    return "→ changed, may be noise"


def fmt_delta(d: MetricDelta) -> str:
    if d.delta is None:
        return "–"
    iv = d.interval
    ci = ""
    if iv is not None and iv.low is not None and iv.high is not None:
        ci = f" [{iv.low:+.3f}, {iv.high:+.3f}]"
    return f"{d.delta:+.3f}{ci}"


# --- JSON -------------------------------------------------------------------


def run_to_dict(run: EvalRun, outcome: CiOutcome | None = None) -> dict[str, Any]:
    """Full run as JSON-ready dict: metadata, summary, cases with queries, CI verdict."""
    s = outcome.summary if outcome else summarize(run)
    cases = []
    for c in run.cases:
        d = to_jsonable(c)
        d["passed"] = c.passed
        for qd, q in zip(d["queries"], c.queries, strict=True):
            qd["key"] = q.key
        cases.append(d)
    out: dict[str, Any] = {
        "run_id": run.run_id,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "duration_s": run.duration_s,
        "config_hash": run.config_hash,
        "git_commit": run.git_commit,
        "config": run.config,
        "suites": [{"name": n, "path": p} for n, p in run.suites],
        "summary": to_jsonable(s),
        "extras": to_jsonable(run.extras),
        "quality": to_jsonable(quality_figures(run.queries)),
        "quality_by_split": to_jsonable(quality_by_split(run)),
        "cases": cases,
    }
    if outcome is not None:
        out["ci"] = {
            "exit_code": outcome.exit_code,
            "reasons": list(outcome.reasons),
            "deltas": [to_jsonable(d) | {"delta": d.delta, "arrow": arrow(d)} for d in outcome.deltas],
        }
    return out


# --- table ------------------------------------------------------------------


def _agg_rows(groups: dict[str, Aggregate], kind: str, metrics: Sequence[str]) -> list[dict[str, Any]]:
    rows = []
    for name, a in groups.items():
        row = {"group": f"{kind}:{name}" if kind else name, "queries": a.n_queries}
        row.update({m: a.means.get(m) for m in metrics})
        row.update({"irrelevant": a.irrelevant_violations, "leaks": a.leaks, "p50 ms": round(a.latency_p50_ms, 1)})
        rows.append(row)
    return rows


def summary_frame(s: Summary, metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """One row per group (all, suite, category, lang, tag) with the metric means."""
    rows = _agg_rows({"all": s.overall}, "", metrics)
    rows += _agg_rows(s.by_split, "split", metrics)
    rows += _agg_rows(s.by_suite, "suite", metrics)
    rows += _agg_rows(s.by_category, "category", metrics)
    rows += _agg_rows(s.by_lang, "lang", metrics)
    rows += _agg_rows(s.by_tag, "tag", metrics)
    return pd.DataFrame(rows)


def render_table(run: EvalRun, outcome: CiOutcome | None = None) -> str:
    """Plain-text summary for a terminal."""
    s = outcome.summary if outcome else summarize(run)
    df = summary_frame(s)
    metric_cols = [c for c in SUMMARY_METRICS if c in df.columns and df[c].notna().any()]
    df = df[["group", "queries", *metric_cols, "irrelevant", "leaks", "p50 ms"]]
    text = df.to_string(index=False, float_format=lambda v: f"{v:.3f}", na_rep="–")
    w = s.writes
    lines = [
        f"run {run.run_id}  config {run.config_hash}  commit {(run.git_commit or '?')[:10]}  {run.duration_s:.1f} s",
        text,
        "",
        f"cases passed {s.cases_passed}/{s.n_cases}; events {w.n_events}: "
        + ", ".join(f"{o} {w.shares[o]:.0%}" for o in w.outcomes)
        + f"; supersessions right {w.supersessions_right} wrong {w.supersessions_wrong}"
        + f"; duplicates stored {w.duplicates_stored}",
    ]
    split = run.extras.get("split")
    if split:
        c = split.get("counts") or {}
        lines.append(f"split: {split.get('label', '?')}; dev {c.get('dev', {}).get('cases', 0)} cases, "
                     f"test {c.get('test', {}).get('cases', 0)} cases; this run: {split.get('part', 'all')}")
    if s.miss_kinds:
        lines.append("missed relevant labels: " + ", ".join(f"{k} {v}" for k, v in sorted(s.miss_kinds.items())))
    lines.extend(_failed_lines(run))
    parts = quality_by_split(run)
    if parts:  # the quality figures of each part, as the rank metrics above
        for part, qf in parts.items():
            lines.extend(f"[{part}] {line}" for line in render_quality(qf))
    else:
        lines.extend(render_quality(quality_figures(run.queries)))
    ragas = run.extras.get("ragas")
    if ragas:
        lines.append(_ragas_line(ragas))
    if outcome is not None:
        lines.append("")
        lines.append("CI: " + ("PASS" if outcome.exit_code == 0 else "FAIL"))
        lines.extend(f"  - {r}" for r in outcome.reasons)
    return "\n".join(lines) + "\n"


def quality_by_split(run: EvalRun) -> dict[str, Any]:
    """Quality figures (stale, context, abstention, official) per split part; {} without a split."""
    membership = (run.extras.get("split") or {}).get("membership") or {}
    out = {}
    for part in ("dev", "test"):
        qs = [q for q in run.queries if membership.get(f"{q.suite}/{q.case_id}") == part]
        if qs:
            out[part] = quality_figures(qs)
    return out


def _ragas_line(r: dict[str, Any]) -> str:
    if r.get("skipped"):
        return f"ragas: skipped ({r['skipped']})"
    parts = [f"{k} {_fmt(v)}" for k, v in (r.get("scores") or {}).items()]
    tail = f"; LLM metrics skipped ({r['llm_skipped']})" if r.get("llm_skipped") else ""
    return f"ragas over {r.get('n_samples', 0)} queries: " + ", ".join(parts) + tail


# --- Markdown ---------------------------------------------------------------


def _failed_queries(run: EvalRun) -> list[QueryResult]:
    return [q for q in run.queries if not q.passed]


def _failed_lines(run: EvalRun, limit: int = 20) -> list[str]:
    """The terminal's why-not: one line per failed query (its key, the first failed assertion and
    the first missed label with its kind), at most ``limit``; the Markdown/JSON reports hold all."""
    failed = _failed_queries(run)
    if not failed:
        return []
    out = [f"failed queries ({len(failed)}):"]
    for q in failed[:limit]:
        bad = next((a for a in q.assertions if not a.passed), None)
        why = f"{bad.name}: {_snip(bad.detail, 90)}" if bad else ""
        if q.misses:
            m = q.misses[0]
            why += f"{'; ' if why else ''}{m.label} {m.kind.value}"
        out.append(f"  {q.key}  {_snip(q.text, 50)!r}  {why}")
    if len(failed) > limit:
        out.append(f"  ... and {len(failed) - limit} more (--out DIR writes report.md with every why-not)")
    return out


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(run: EvalRun, outcome: CiOutcome | None = None, *, max_failures: int = 50) -> str:
    """Markdown fit for a pull-request comment: verdict, per-category metrics with
    baseline / now / delta [95% CI] / arrow, write-path quality, failed queries
    with expected labels next to the ranked retrieved contents."""
    s = outcome.summary if outcome else summarize(run)
    out: list[str] = []
    verdict = ""
    if outcome is not None:
        verdict = " — ✅ pass" if outcome.exit_code == 0 else " — ❌ fail"
    out.append(f"## memwb eval{verdict}")
    out.append("")
    out.append(
        f"run `{run.run_id}` · config `{run.config_hash}` · commit `{(run.git_commit or '?')[:10]}` · "
        f"{s.overall.n_queries} queries in {s.n_cases} cases · {run.duration_s:.1f} s"
    )
    out.append("")
    if outcome is not None and outcome.reasons:
        out.extend(f"- {_md_escape(r)}" for r in outcome.reasons)
        out.append("")
    if outcome is not None and outcome.deltas:
        changed = [d for d in outcome.deltas if d.regressed or changed_delta(d)]
        n, k = len(outcome.deltas), len(changed)
        regressed = sum(d.regressed for d in changed)
        if not changed:
            out.append(f"No metric changed against the baseline ({n} group × metric values compared).")
        else:
            out.append(f"{k} of {n} group × metric values changed ({regressed} regressed); the {n - k} unchanged "
                       "are not listed.")  # fmt: skip
            out.append("")
            out.append("| group | metric | baseline | now | Δ [95% CI] | verdict |")
            out.append("|---|---|---:|---:|---|---|")
            for d in changed:
                out.append(
                    f"| {_md_escape(d.group)} | {d.metric} | {_fmt(d.baseline)} | {_fmt(d.now)} | {fmt_delta(d)} | "
                    f"{delta_verdict(d)} |"
                )
            out.append("")
            out.append("Significant: the 95% paired-bootstrap interval over queries excludes 0. A regression is a drop "
                       "beyond `--max-drop`, whatever the interval says.")  # fmt: skip
        out.append("")
    else:
        metrics = [m for m in SUMMARY_METRICS if s.overall.means.get(m) is not None]
        out.append("| group | queries | " + " | ".join(metrics) + " | irrelevant | leaks |")
        out.append("|---|---:|" + "---:|" * len(metrics) + "---:|---:|")
        groups = [("all", s.overall), *((f"category:{k}", v) for k, v in s.by_category.items())]
        groups += [(f"tag:{k}", v) for k, v in s.by_tag.items()]
        for name, a in groups:
            out.append(
                f"| {_md_escape(name)} | {a.n_queries} | "
                + " | ".join(_fmt(a.means.get(m)) for m in metrics)
                + f" | {a.irrelevant_violations} | {a.leaks} |"
            )
        out.append("")
    w = s.writes
    out.append(
        f"**Writes**: {w.n_events} events — "
        + ", ".join(f"{o} {w.shares[o]:.0%}" for o in w.outcomes)
        + f"; expect_write ok {w.expect_write_ok}/{w.expect_write_total}"
        + f"; supersessions right {w.supersessions_right} / wrong {w.supersessions_wrong}"
        + f" (missed {w.supersessions_missed}); duplicates stored {w.duplicates_stored}"
    )
    qlines = render_quality(quality_figures(run.queries))
    if qlines:
        out.append("")
        out.append("**Stale memories, context, abstention, official metrics** (definitions: docs/metrics.md)")
        out.append("")
        out.append("```")
        out.extend(qlines)
        out.append("```")
    ragas = run.extras.get("ragas")
    if ragas:
        out.append("")
        out.append(f"**ragas**: {_md_escape(_ragas_line(ragas))}")
    failed = _failed_queries(run)
    if failed:
        out.append("")
        out.append(f"### Failed queries ({len(failed)})")
        for q in failed[:max_failures]:
            out.append("")
            mp = " · must-pass" if q.must_pass else ""
            out.append(f"<details><summary><code>{html.escape(q.key)}</code> ({html.escape(q.category)}{mp}): "
                       f"{html.escape(_snip(q.text, 80))}</summary>")
            out.append("")
            bad = [a for a in q.assertions if not a.passed]
            for failed_assertion in bad:
                out.append(f"- ✗ `{failed_assertion.name}` {_md_escape(failed_assertion.detail)}")
            out.append("")
            out.append("| expected | rank | | # | retrieved (labels) | score |")
            out.append("|---|---:|---|---:|---|---:|")
            exp = [(lab, q.relevant_ranks.get(lab)) for lab in q.relevant]
            exp += [(f"not {lab}", None) for lab in q.irrelevant_violations]
            n = max(len(exp), len(q.retrieved))
            for i in range(n):
                e = exp[i] if i < len(exp) else ("", None)
                r = q.retrieved[i] if i < len(q.retrieved) else None
                rcell = ""
                if r is not None:
                    labs = ",".join(r.labels) or "–"
                    rcell = f"{r.rank} | {_md_escape(_snip(r.content))} ({labs}) | {r.score:.3f}"
                else:
                    rcell = " | | "
                rank = "" if not e[0] else ("–" if e[1] is None else str(e[1]))
                out.append(f"| {_md_escape(e[0])} | {rank} | | {rcell} |")
            if q.misses:
                out.append("")
                for m in q.misses:
                    out.append(f"- `{m.label}` missed: {_md_escape(m.detail)}")
            out.append("")
            out.append("</details>")
        if len(failed) > max_failures:
            out.append("")
            out.append(f"… and {len(failed) - max_failures} more (see the JSON report).")
    return "\n".join(out) + "\n"


# --- JUnit ------------------------------------------------------------------


def render_junit(run: EvalRun) -> str:
    """JUnit XML: one ``<testsuite>`` per suite, one ``<testcase>`` per query
    (classname ``suite.case``, time in seconds = retrieval latency), a
    ``<failure>`` listing the failed assertions and why-not misses."""
    root = ET.Element("testsuites", name="memwb", tests=str(len(run.queries)))
    by_suite: dict[str, list[QueryResult]] = {}
    for q in run.queries:
        by_suite.setdefault(q.suite, []).append(q)
    total_fail = 0
    for suite, qs in by_suite.items():
        fails = sum(1 for q in qs if not q.passed)
        total_fail += fails
        ts = ET.SubElement(
            root, "testsuite", name=suite, tests=str(len(qs)), failures=str(fails), errors="0",
            time=f"{sum(q.latency_ms for q in qs) / 1000:.3f}",
        )
        for q in qs:
            tc = ET.SubElement(ts, "testcase", classname=f"{suite}.{q.case_id}", name=q.query_id,
                               time=f"{q.latency_ms / 1000:.4f}")
            if not q.passed:
                bad = [a for a in q.assertions if not a.passed]
                msg = "; ".join(f"{a.name}: {a.detail}".rstrip(": ") for a in bad)
                body = [f"query: {q.text}"]
                body += [f"expected {lab} at rank {q.relevant_ranks.get(lab) or '-'}" for lab in q.relevant]
                body += [f"#{r.rank} {','.join(r.labels) or '-'} {r.score:.3f} {_snip(r.content)}" for r in q.retrieved]
                body += [f"missed {m.label}: {m.detail}" for m in q.misses]
                f = ET.SubElement(tc, "failure", message=msg or "failed", type="AssertionError")
                f.text = "\n".join(body)
        write_fail = [
            f"{c.case_id}/{w.label}: expected {w.expected}, got {w.outcome} ({w.reason})"
            for c in run.cases if c.suite == suite for w in c.writes if w.expectation_ok is False
        ]
        if write_fail:
            ET.SubElement(ts, "system-out").text = "write expectations failed:\n" + "\n".join(write_fail)
    root.set("failures", str(total_fail))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- HTML -------------------------------------------------------------------


def figures(run: EvalRun, outcome: CiOutcome | None = None) -> list[Any]:
    """Plotly figures (pure): metric means per category (with baseline when
    given), latency distribution, missed-label reasons, write outcomes."""
    import plotly.graph_objects as go

    s = outcome.summary if outcome else summarize(run)
    figs = []
    metrics = ["pass", "recall@k", "mrr", "ndcg@k"]
    cats = list(s.by_category)
    fig = go.Figure()
    for m in metrics:
        fig.add_bar(name=f"{m} now", x=cats, y=[s.by_category[c].means.get(m) for c in cats])
    if outcome is not None and outcome.deltas:
        base = {(d.group, d.metric): d.baseline for d in outcome.deltas}
        for m in metrics:
            fig.add_scatter(
                name=f"{m} baseline", x=cats, y=[base.get((f"category:{c}", m)) for c in cats], mode="markers",
                marker={"symbol": "line-ew-open", "size": 18},
            )
    fig.update_layout(title="Metrics by category", barmode="group", yaxis={"range": [0, 1.05]}, height=420)
    figs.append(fig)
    lat = [q.latency_ms for q in run.queries]
    figs.append(go.Figure(go.Histogram(x=lat, nbinsx=40)).update_layout(
        title="Retrieval latency (ms)", xaxis_title="ms", yaxis_title="queries", height=320))
    if s.miss_kinds:
        figs.append(go.Figure(go.Bar(x=list(s.miss_kinds), y=list(s.miss_kinds.values()))).update_layout(
            title="Why relevant labels were missed", height=320))
    w = s.writes
    figs.append(go.Figure(go.Bar(x=list(w.outcomes), y=list(w.outcomes.values()))).update_layout(
        title="Write outcomes", height=320))
    cal = calibration_frame(run.queries)
    if (cal["kind"] == "unanswerable").any():
        floor = (run.config.get("retrieval") or {}).get("floor")
        figs.append(calibration_figure(cal, floor=floor))
    return figs


def render_html(run: EvalRun, outcome: CiOutcome | None = None) -> str:
    """One self-contained HTML file (plotly.js inlined, no network needed)."""
    s = outcome.summary if outcome else summarize(run)
    parts = []
    for i, fig in enumerate(figures(run, outcome)):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0)))
    table = summary_frame(s).to_html(index=False, na_rep="–", float_format=lambda v: f"{v:.3f}", border=0)
    md_deltas = ""
    if outcome is not None and outcome.deltas:
        rows = "".join(
            f"<tr{' class=bad' if d.regressed else ''}><td>{html.escape(d.group)}</td><td>{d.metric}</td>"
            f"<td>{_fmt(d.baseline)}</td><td>{_fmt(d.now)}</td><td>{html.escape(fmt_delta(d))}</td><td>{arrow(d)}</td></tr>"
            for d in outcome.deltas
        )
        md_deltas = ("<h2>Against the baseline</h2><table><tr><th>group</th><th>metric</th><th>baseline</th>"
                     f"<th>now</th><th>Δ [95% CI]</th><th></th></tr>{rows}</table>")
    verdict = ""
    if outcome is not None:
        verdict = "<p class=ok>CI: pass</p>" if outcome.exit_code == 0 else (
            "<p class=bad>CI: fail</p><ul>" + "".join(f"<li>{html.escape(r)}</li>" for r in outcome.reasons) + "</ul>")
    fails = []
    for q in _failed_queries(run)[:200]:
        items = "".join(
            f"<li>#{r.rank} <b>{html.escape(','.join(r.labels) or '–')}</b> {r.score:.3f} {html.escape(_snip(r.content))}</li>"
            for r in q.retrieved
        )
        misses = "".join(f"<li>{html.escape(m.label)}: {html.escape(m.detail)}</li>" for m in q.misses)
        bad = "; ".join(f"{a.name} {a.detail}" for a in q.assertions if not a.passed)
        fails.append(
            f"<details><summary><code>{html.escape(q.key)}</code> {html.escape(_snip(q.text, 80))}</summary>"
            f"<p>{html.escape(bad)}</p><p>expected: {html.escape(', '.join(q.relevant) or '–')}</p>"
            f"<ol style='list-style:none'>{items}</ol><ul>{misses}</ul></details>"
        )
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>memwb eval {html.escape(run.run_id)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}} table{{border-collapse:collapse}}
td,th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}} td:first-child{{text-align:left}}
.bad{{color:#b00}} .ok{{color:#070}}</style></head><body>
<h1>memwb eval run {html.escape(run.run_id)}</h1>
<p>config {html.escape(run.config_hash)} · commit {html.escape((run.git_commit or '?')[:10])} ·
{s.overall.n_queries} queries · {run.duration_s:.1f} s</p>
{verdict}
{table}
{md_deltas}
{''.join(parts)}
<h2>Failed queries</h2>
{''.join(fails) or '<p>none</p>'}
</body></html>
"""
