"""Parameter sweeps: define ranges, start an optuna sweep over golden suites, watch progress, see the
heatmap / parallel coordinates / Pareto front (optuna's Plotly figures) and download the best config as TOML."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine.config import EngineConfig  # noqa: E402
from memory_engine.errors import MemoryEngineError  # noqa: E402

ui.setup("Parameter sweeps")
st.title("Parameter sweeps")
s = ui.provenance()
wh = ui.warehouse()

study_mod = ui.optional("memory_engine.evaluation.sweep_study")
if study_mod is None:
    ui.not_available("Defining and starting sweeps (optuna)", "memory_engine.evaluation.sweep_study")
else:
    from memory_engine.evaluation.sweep import SearchMode, parse_metric, parse_params

    suite_dir = ui.demo.DEFAULT_SUITES_DIR
    files = sorted(p.name for p in suite_dir.glob("*.yaml")) if suite_dir.is_dir() else []
    with st.expander("New sweep", expanded=True):
        chosen = st.multiselect("Suites", files, default=files[:1], key="sw_suites")
        params = st.text_area("Parameters (one per line: key=low:high[:step] or key=v1,v2,...)",
                              value="retrieval.floor=0.35:0.55:0.05", key="sw_params")
        c1, c2, c3 = st.columns(3)
        mode = c1.selectbox("Search", [m.value for m in SearchMode], key="sw_mode")
        objectives = c2.text_input("Objective(s), comma separated (two = Pareto front)", value="ndcg@k",
                                   key="sw_obj")
        trials = c3.number_input("Trials (0 = whole grid)", min_value=0, value=0, key="sw_trials")
        if st.button("Start sweep", key="sw_go", type="primary", disabled=not chosen):
            try:
                base = EngineConfig()
                spec = study_mod.SweepSpec(
                    suite_paths=tuple(str(suite_dir / f) for f in chosen),
                    params=parse_params([x for x in params.splitlines() if x.strip()], base),
                    search=SearchMode(mode),
                    objectives=tuple(parse_metric(o) for o in objectives.split(",") if o.strip()),
                )
                bar = st.progress(0.0, text="starting")
                run = study_mod.run_sweep(spec, base, trials=int(trials) or None, warehouse=wh,
                                          progress=lambda d, t: bar.progress(min(1.0, d / max(t, 1)), text=f"{d}/{t} trials"))
                st.session_state["sw_study"] = run.study
                st.success(f"Sweep {run.study_name}: {run.ran} trials run in {run.seconds:.0f} s.")
                s = ui.summary()
            except MemoryEngineError as e:
                st.error(str(e))

    study = st.session_state.get("sw_study")
    if study is not None:
        import optuna.visualization as ov

        st.subheader(f"Sweep {study.study_name}")
        multi = len(study.directions) > 1
        names = [p for t in study.trials for p in t.params]
        names = list(dict.fromkeys(names))
        try:
            if multi:
                st.plotly_chart(ov.plot_pareto_front(study), width="stretch", key="sw_pareto")
            else:
                st.plotly_chart(ov.plot_parallel_coordinate(study), width="stretch", key="sw_parallel")
                if len(names) >= 2:
                    st.plotly_chart(ov.plot_contour(study, params=names[:2]), width="stretch", key="sw_heat")
            cfg, ft = study_mod.best_config(study, EngineConfig())
            st.download_button("Download best config (TOML)", cfg.to_toml(), file_name=f"{study.study_name}.toml",
                               key="sw_dl")
            st.caption(f"best trial #{ft.number}: {ft.params} -> {ft.values}")
        except (MemoryEngineError, ValueError) as e:
            st.warning(f"No figure / best config yet: {e}")

st.subheader("Stored sweeps")
sweeps = ui.cached(s, "sweeps.list", (), wh.list_sweeps)
if not sweeps:
    st.info("No sweep trial stored yet (no data).")
    st.stop()
sid = st.selectbox("Sweep", [x["sweep_id"] for x in sweeps], key="sw_pick")
trials_rows = ui.cached(s, "sweeps.trials", sid, lambda: wh.list_sweep_trials(sid))
flat = pd.json_normalize([{"trial": t["trial_number"], "state": t["state"], "duration_s": t["duration_s"],
                           "params": t["params"], "metrics": t["metrics"]} for t in trials_rows])
st.caption(f"{len(trials_rows)} trials")
st.dataframe(flat, hide_index=True, width="stretch")
