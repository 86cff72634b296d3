"""Golden eval: choose suites (and a held-out test folder) and config overrides, run with progress, results by
split, category and language, stale memories / context / abstention figures with the relevance calibration plot,
failed queries with expected labels against what was retrieved and the why-not of each miss, and two runs side by
side: the parameters that differ, per-category deltas with intervals, the queries that flipped, item by item."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.config import EngineConfig, parse_override_lines  # noqa: E402
from memory_engine.errors import MemoryEngineError  # noqa: E402
from memory_engine.evaluation.compare import compare_runs  # noqa: E402
from memory_engine.evaluation.quality import calibration_figure, calibration_frame, quality_figures  # noqa: E402
from memory_engine.observability.metrics import stale_served, stale_served_series  # noqa: E402

ui.setup("Golden eval")
st.title("Golden eval")
s = ui.provenance()
wh = ui.warehouse()

suite_dir = Path(st.sidebar.text_input("Suites folder", value=str(ui.demo.DEFAULT_SUITES_DIR), key="ge_dir"))
files = sorted(p.name for p in suite_dir.glob("*.yaml")) if suite_dir.is_dir() else []
sibling_test = suite_dir.parent / f"{suite_dir.name}_test"  # eval_sets -> eval_sets_test, the frozen held-out split
test_dir_text = st.sidebar.text_input(
    "Test split folder (held out; 'auto' = <suites folder>_test when it exists; empty = no split)", value="auto",
    key="ge_test_dir", help="Suites here form the test split, the chosen suites the dev split: the run records "
                            "which case is which and shows both scores.")
if test_dir_text.strip() == "auto":
    test_dir_text = str(sibling_test) if sibling_test.is_dir() else ""
st.sidebar.caption(f"test split: {test_dir_text or 'none'}")

with st.expander("Run suites", expanded=True):
    chosen = st.multiselect("Suites", files, default=files, key="ge_suites")  # a run means every suite unless narrowed
    overrides = st.text_area("Config overrides (one dotted.key=value per line)", placeholder="retrieval.floor=0.4",
                             key="ge_overrides")
    if st.button("Run", key="ge_run", type="primary", disabled=not chosen):
        from memory_engine.evaluation.runner import run_suites
        from memory_engine.evaluation.splits import load_split
        from memory_engine.evaluation.store import save_run

        split = None
        try:
            cfg = EngineConfig().with_overrides(parse_override_lines(overrides))
            test_paths = [Path(test_dir_text)] if test_dir_text.strip() else []
            suites, split = load_split([suite_dir / f for f in chosen], test_paths=test_paths)
        except MemoryEngineError as e:
            st.error(str(e))
        else:
            total = sum(x.n_queries for x in suites) or 1
            bar = st.progress(0.0, text=f"0/{total} queries")
            done = [0]

            def tick(n: int) -> None:
                done[0] += n
                bar.progress(min(1.0, done[0] / total), text=f"{done[0]}/{total} queries")

            run = run_suites(suites, cfg, progress=tick)
            if split is not None:
                run = dataclasses.replace(run, extras=run.extras | {"split": split.record() | {"part": "all"}})
            save_run(run, warehouse=wh)
            # the selectbox keeps its own state once rendered: point it at the new run, or tiles and charts
            # would go on showing the run that was newest when the page loaded
            st.session_state["ge_a"] = run.run_id
            st.success(f"Run {run.run_id} stored ({len(run.queries)} queries, {run.duration_s:.1f} s).")
            s = ui.summary()

runs = ui.cached(s, "eval.runs", (), lambda: wh.list_eval_runs(limit=200))
if not runs:
    st.info("No eval run stored yet: run suites above (or `memwb eval --store`).")
    st.stop()


def label(r: dict) -> str:
    when = r["started_at"].strftime("%Y-%m-%d %H:%M") if r.get("started_at") else "?"
    return f"{r['run_id']} · {when} · {r['suite'][:50]} · {viz.config_label(r.get('config'), r.get('config_hash'))}"


ids = [r["run_id"] for r in runs]
by_id = {r["run_id"]: r for r in runs}
c1, c2 = st.columns(2)
if st.session_state.get("ge_a") not in ids:
    st.session_state.pop("ge_a", None)
run_a = c1.selectbox("Run A", ids, format_func=lambda i: label(by_id[i]), key="ge_a")
run_b = c2.selectbox("Run B (compare)", ["(none)", *ids], format_func=lambda i: i if i == "(none)" else label(by_id[i]),
                     key="ge_b")
rows_a = ui.cached(s, "eval.queries", run_a, lambda: wh.eval_queries(run_a))
meta = by_id[run_a]
mets = meta.get("metrics") or {}
run_meta = meta.get("meta") or {}


def fmt(v: float | None, pct: bool = False) -> str:
    return viz.NO_DATA if v is None else (f"{v:.1%}" if pct else f"{v:.3f}")


cols = st.columns(4)
cols[0].metric("Queries", mets.get("n_queries", len(rows_a)))
cols[1].metric("Cases passed", f"{mets.get('cases_passed', '?')}/{mets.get('n_cases', '?')}")
cols[2].metric("recall@k", fmt(mets.get("recall@k")))
cols[3].metric("MRR", fmt(mets.get("mrr")))

split = run_meta.get("split")
by_split = run_meta.get("by_split") or {}
if split:
    st.subheader("Dev and test")
    st.caption(f"Split: {split.get('label', '?')}. Tune on dev, judge on test: a dev gain that does not show on "
               "test is overfitting.")
    sc = st.columns(4)
    for i, part in enumerate(("dev", "test")):
        m = by_split.get(part) or {}
        sc[2 * i].metric(f"{part} pass rate ({m.get('n_queries', 0)} queries)", fmt(m.get("pass")))
        sc[2 * i + 1].metric(f"{part} recall@k", fmt(m.get("recall@k")))
    st.dataframe(pd.DataFrame([{"split": p, **{k: v for k, v in (by_split.get(p) or {}).items()
                                               if k in ("n_queries", "pass", "hit@k", "recall@k", "mrr", "ndcg@k",
                                                        "stale@k", "unanswerable_returned", "context_tokens")}}
                               for p in ("dev", "test") if p in by_split]), hide_index=True, width="stretch")
    with st.expander("Split membership (case -> dev / test)"):
        st.dataframe(pd.DataFrame(sorted({(r["case_id"], (r.get("details") or {}).get("split") or "-") for r in rows_a}),
                                  columns=["case", "split"]), hide_index=True, width="stretch")

qf = ui.cached(s, "eval.quality", run_a, lambda: quality_figures(rows_a))
st.subheader("Stale memories, context, abstention")
qc = st.columns(4)
qc[0].metric("stale@k", fmt(qf.stale.share, pct=True),
             help=f"{qf.stale.n_stale} of {qf.stale.n_scope} update/forget queries hold a superseded, corrected or "
                  "forgotten memory in their top k (docs/metrics.md)")
qc[1].metric("context tokens / query", fmt(qf.context.tokens) if qf.context.tokens is None else f"{qf.context.tokens:.0f}",
             help=f"the context block injected into the prompt; full history {qf.context.full_tokens or 0:.0f} tokens")
qc[2].metric("relevant inside the budget", fmt(qf.context.relevant_inside))
qc[3].metric("unanswerable that returned something", fmt(qf.abstention.share_returned, pct=True),
             help=f"{qf.abstention.returned} of {qf.abstention.n} never-stored questions (0% is best)")
live = ui.cached(s, "stale.live", (), lambda: stale_served_series(wh, bucket="day"))
live_all = ui.cached(s, "stale.live.all", (), lambda: stale_served(wh))
with st.expander(f"Live traffic: retrievals that served a superseded memory — {live_all.label}"):
    st.caption("The same stale@k on the warehouse's spans: a retrieval returning a memory that an earlier "
               "write had superseded (docs/metrics.md).")
    st.plotly_chart(viz.timeseries_figure(viz.series_frame(live), title="stale memories served, per day"),
                    width="stretch", key="ge_stale_live")
cal = calibration_frame(rows_a)
if not cal.empty and (cal["kind"] == "unanswerable").any():
    floor = ((meta.get("config") or {}).get("retrieval") or {}).get("floor")
    st.plotly_chart(calibration_figure(cal, floor=floor), width="stretch", key="ge_calibration")
for bench, groups in qf.official.items():
    with st.expander(f"Official {bench} metrics (names as the benchmark's authors use them)"):
        st.dataframe(pd.DataFrame([{"group": g, **v} for g, v in groups.items()]), hide_index=True, width="stretch")

g1, g2 = st.columns(2)
by_cat = viz.eval_groups_frame(rows_a, "category", top=viz.GROUP_CHART_TOP)  # many categories: the largest + "other"
g1.plotly_chart(viz.grouped_bar_figure(by_cat, x="group", y="value", color="metric", title="By category",
                                       y_range=(0, 1.05)), width="stretch", key="ge_cat")
g2.plotly_chart(viz.grouped_bar_figure(viz.eval_groups_frame(rows_a, "lang"), x="group", y="value", color="metric",
                                       title="By language", y_range=(0, 1.05)), width="stretch", key="ge_lang")

st.subheader("Failed queries")
failed = viz.failed_queries_frame(rows_a)
if not failed:
    st.success("Every query of this run passed.")
for f in failed[:50]:
    part = f" · {f['split']}" if f.get("split") else ""
    with st.expander(f"{f['key']} · {f['category']} · {f['lang']}{part} — {f['text']}"):
        st.markdown("**Expected labels** (rank in the result, empty = missed)")
        # one dtype per column (nullable ints): a '–' among ints made Arrow log a traceback per render
        st.dataframe(pd.DataFrame({"label": list(f["expected"]),
                                   "rank": pd.array(list(f["expected"].values()), dtype="Int64")}),
                     hide_index=True, width="stretch")
        st.markdown("**Retrieved**")
        st.dataframe(pd.DataFrame(f["retrieved"]), hide_index=True, width="stretch")
        if f["misses"]:
            st.markdown("**Why not**")
            st.dataframe(pd.DataFrame(f["misses"]), hide_index=True, width="stretch")
        for a in f["assertions"]:
            st.caption(f"failed assertion {a.get('name')}: {a.get('detail')}")
if len(failed) > 50:
    st.caption(f"{len(failed) - 50} more failed queries not shown.")

if run_b != "(none)":
    st.subheader(f"B ({run_b}) against A ({run_a})")
    rows_b = ui.cached(s, "eval.queries", run_b, lambda: wh.eval_queries(run_b))
    cmp = ui.cached(s, "eval.compare", (run_a, run_b),
                    lambda: compare_runs(by_id[run_a], rows_a, by_id[run_b], rows_b))
    st.markdown("**Parameters that differ** (A → B)")
    if cmp.config.empty:
        st.caption("Same parameters in both runs.")
    else:
        st.dataframe(cmp.config, hide_index=True, width="stretch")
    if cmp.deltas.empty:
        st.info("The two runs share no query.")
    else:
        overall = cmp.deltas[cmp.deltas["group"] == "all"]
        st.plotly_chart(viz.delta_figure(overall, title="B − A over all shared queries (paired bootstrap 95% interval)"),
                        width="stretch", key="ge_delta")
        st.markdown("**Per category**: B − A with its paired-bootstrap interval (significant = excludes 0)")
        st.dataframe(cmp.deltas[cmp.deltas["group"] != "all"], hide_index=True, width="stretch")
    fl = cmp.flipped
    st.markdown(f"**Queries that flipped**: {int((fl['change'] == 'broke').sum())} broke, "
                f"{int((fl['change'] == 'fixed').sum())} fixed")
    if not fl.empty:
        st.dataframe(fl, hide_index=True, width="stretch")
    with st.expander(f"Item by item ({len(cmp.items)} queries)"):
        st.dataframe(cmp.items, hide_index=True, width="stretch")
