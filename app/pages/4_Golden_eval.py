"""Golden eval: choose suites and config overrides, run with progress, results by category and language,
failed queries with expected labels against what was retrieved and the why-not of each miss, two runs side by side."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.config import EngineConfig  # noqa: E402
from memory_engine.errors import MemoryEngineError  # noqa: E402

ui.setup("Golden eval")
st.title("Golden eval")
s = ui.provenance()
wh = ui.warehouse()

suite_dir = Path(st.sidebar.text_input("Suites folder", value=str(ui.demo.DEFAULT_SUITES_DIR), key="ge_dir"))
files = sorted(p.name for p in suite_dir.glob("*.yaml")) if suite_dir.is_dir() else []

with st.expander("Run suites", expanded=True):
    chosen = st.multiselect("Suites", files, default=files, key="ge_suites")  # a run means every suite unless narrowed
    overrides = st.text_area("Config overrides (one dotted.key=value per line)", placeholder="retrieval.floor=0.4",
                             key="ge_overrides")
    if st.button("Run", key="ge_run", type="primary", disabled=not chosen):
        from memory_engine.evaluation.runner import run_suites
        from memory_engine.evaluation.store import save_run
        from memory_engine.evaluation.suite import load_suites

        try:
            cfg = EngineConfig().with_overrides(ui.demo.parse_overrides(overrides))
            suites = load_suites([suite_dir / f for f in chosen])
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
            save_run(run, warehouse=wh)
            st.session_state["ge_pick_a"] = run.run_id
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
default_a = ids.index(st.session_state["ge_pick_a"]) if st.session_state.get("ge_pick_a") in ids else 0
run_a = c1.selectbox("Run A", ids, index=default_a, format_func=lambda i: label(by_id[i]), key="ge_a")
run_b = c2.selectbox("Run B (compare)", ["(none)", *ids], format_func=lambda i: i if i == "(none)" else label(by_id[i]),
                     key="ge_b")
rows_a = ui.cached(s, "eval.queries", run_a, lambda: wh.eval_queries(run_a))
meta = by_id[run_a]
mets = meta.get("metrics") or {}
cols = st.columns(4)
cols[0].metric("Queries", mets.get("n_queries", len(rows_a)))
cols[1].metric("Cases passed", f"{mets.get('cases_passed', '?')}/{mets.get('n_cases', '?')}")
cols[2].metric("recall@k", f"{mets['recall@k']:.3f}" if mets.get("recall@k") is not None else viz.NO_DATA)
cols[3].metric("MRR", f"{mets['mrr']:.3f}" if mets.get("mrr") is not None else viz.NO_DATA)

g1, g2 = st.columns(2)
g1.plotly_chart(viz.grouped_bar_figure(viz.eval_groups_frame(rows_a, "category"), x="group", y="value", color="metric",
                                       title="By category", y_range=(0, 1.05)), width="stretch", key="ge_cat")
g2.plotly_chart(viz.grouped_bar_figure(viz.eval_groups_frame(rows_a, "lang"), x="group", y="value", color="metric",
                                       title="By language", y_range=(0, 1.05)), width="stretch", key="ge_lang")

st.subheader("Failed queries")
failed = viz.failed_queries_frame(rows_a)
if not failed:
    st.success("Every query of this run passed.")
for f in failed[:50]:
    with st.expander(f"{f['key']} · {f['category']} · {f['lang']} — {f['text']}"):
        st.markdown("**Expected labels** (rank in the result, – = missed)")
        st.dataframe(pd.DataFrame([{"label": k, "rank": v if v is not None else "–"} for k, v in f["expected"].items()]),
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
    cmp = ui.cached(s, "eval.compare", (run_a, run_b), lambda: viz.compare_runs_frame(rows_a, rows_b))
    if cmp.empty:
        st.info("The two runs share no query.")
    else:
        st.dataframe(cmp, hide_index=True, width="stretch")
        st.plotly_chart(viz.delta_figure(cmp, title="B − A (paired bootstrap 95% interval)"), width="stretch",
                        key="ge_delta")
