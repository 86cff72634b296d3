"""Parameter sweeps: define ranges, start an optuna sweep over golden suites (the dev split; optional held-out
test suites), watch progress, see the heatmap / parallel coordinates / Pareto front (optuna's Plotly figures),
the chosen config on test beside dev with the generalization gap and its warning, and download the best config."""

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
    from memory_engine.evaluation.generalization import generalization_figure, generalization_frame
    from memory_engine.evaluation.splits import load_split
    from memory_engine.evaluation.suite import load_suites
    from memory_engine.evaluation.sweep import SearchMode, objective_support, parse_metric, parse_params

    suite_dir = ui.demo.DEFAULT_SUITES_DIR
    files = sorted(p.name for p in suite_dir.glob("*.yaml")) if suite_dir.is_dir() else []
    test_dir = suite_dir.parent / f"{suite_dir.name}_test"
    test_files = sorted(p.name for p in test_dir.glob("*.yaml")) if test_dir.is_dir() else []
    # preselect the first suite whose queries can score the default objective: a suite of abstention
    # queries alone (no relevant label) leaves ndcg@k undefined in every trial
    default_ref = parse_metric("ndcg@k")
    scored = [f for f in files if objective_support(load_suites([suite_dir / f]), default_ref)]
    with st.expander("New sweep", expanded=True):
        chosen = st.multiselect("Suites (dev: the sweep optimises on these)", files, default=scored[:1],
                                key="sw_suites")
        held_out = st.multiselect("Held-out test suites (never seen by the sweep; empty = no split)", test_files,
                                  default=[], key="sw_test")
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
                all_suites, split = load_split([suite_dir / f for f in chosen],
                                               test_paths=[test_dir / f for f in held_out])
                dev = list(split.dev) if split else all_suites
                objs = tuple(parse_metric(o) for o in objectives.split(",") if o.strip())
                spec = study_mod.SweepSpec(
                    suite_paths=tuple(str(suite_dir / f) for f in chosen),
                    params=parse_params([x for x in params.splitlines() if x.strip()], base),
                    search=SearchMode(mode),
                    objectives=objs,
                    split=split.spec.to_dict() if split else None,
                )
                empty = [o.label for o in objs if not objective_support(dev, o)]
                if empty:
                    st.error(f"No query of the chosen suites can score {', '.join(empty)} (rank metrics need "
                             "queries with relevant labels; an abstention suite has none): every trial would be "
                             "undefined. Add a suite with relevant labels or choose the objective 'pass'.")
                else:
                    bar = st.progress(0.0, text="starting")
                    run = study_mod.run_sweep(
                        spec, base, suites=dev, trials=int(trials) or None, warehouse=wh,
                        test_suites=split.test if split else None, split_record=split.record() if split else None,
                        progress=lambda d, t: bar.progress(min(1.0, d / max(t, 1)), text=f"{d}/{t} trials"))
                    st.session_state["sw_study"] = run.study
                    st.session_state["sw_gen"] = run.generalization
                    st.success(f"Sweep {run.study_name}: {run.ran} trials run in {run.seconds:.0f} s.")
                    s = ui.summary()
            except MemoryEngineError as e:
                st.error(str(e))

    def show_study(study: object, key: str) -> None:
        """optuna's figures of a study (Pareto front, or parallel coordinates and a contour), its best config and
        the trial counts; the same for the sweep just run and for a stored one the CLI ran."""
        import optuna.visualization as ov

        multi = len(study.directions) > 1
        names = [p for t in study.trials for p in t.params]
        names = list(dict.fromkeys(names))
        try:
            if multi:
                st.plotly_chart(ov.plot_pareto_front(study), width="stretch", key=f"{key}_pareto")
            else:
                st.plotly_chart(ov.plot_parallel_coordinate(study), width="stretch", key=f"{key}_parallel")
                if len(names) >= 2:
                    st.plotly_chart(ov.plot_contour(study, params=names[:2]), width="stretch", key=f"{key}_heat")
            cfg, ft = study_mod.best_config(study, EngineConfig())
            st.download_button("Download best config (TOML)", cfg.to_toml(), file_name=f"{study.study_name}.toml",
                               key=f"{key}_dl")
            st.caption(f"best trial #{ft.number}: {ft.params} -> {ft.values}")
        except (MemoryEngineError, ValueError) as e:
            st.warning(f"No figure / best config yet: {e}")
        counts: dict[str, int] = {}
        for t in study.trials:
            counts[t.user_attrs.get("status", t.state.name.lower())] = counts.get(
                t.user_attrs.get("status", t.state.name.lower()), 0) + 1
        st.caption("trials: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                   + (" (undefined: no scored query in the objective's group)" if counts.get("undefined") else ""))

    study = st.session_state.get("sw_study")
    if study is not None:
        st.subheader(f"Sweep {study.study_name}")
        show_study(study, "sw")

    def show_generalization(g: object, key: str) -> None:
        """Dev and test figures of the chosen config, the gap and the warnings."""
        st.markdown(f"**Chosen config on test beside dev** (trial #{g.trial}: {g.params}; objective {g.objective})")
        st.dataframe(generalization_frame(g), hide_index=True, width="stretch")
        st.metric("Generalization gap (dev gain − test gain)", "–" if g.gap is None else f"{g.gap:+.4f}")
        for w in g.warnings:
            st.warning(w)
        if not g.warnings:
            st.success("The test gain is positive and its 95% interval excludes 0: the dev gain carries over.")
        st.plotly_chart(generalization_figure(g), width="stretch", key=key)

    gen = st.session_state.get("sw_gen")
    if study is not None and gen is not None:
        show_generalization(gen, "sw_gen_fig")

st.subheader("Stored sweeps")
sweeps = ui.cached(s, "sweeps.list", (), wh.list_sweeps)
if not sweeps:
    st.info("No sweep trial stored yet (no data).")
    st.stop()
sid = st.selectbox("Sweep", [x["sweep_id"] for x in sweeps], key="sw_pick")
trials_rows = ui.cached(s, "sweeps.trials", sid, lambda: wh.list_sweep_trials(sid))
if study_mod is not None:
    # a sweep run by `memwb sweep` keeps its optuna study in the workspace's sweeps.sqlite3: draw its figures too
    from memory_engine.paths import workspace_paths

    sweeps_db = workspace_paths(ui.workspace()).sweeps
    if sweeps_db.exists():
        try:
            stored_study, _, _ = study_mod.load_sweep(sid, f"sqlite:///{sweeps_db}")
        except MemoryEngineError:
            st.caption("This sweep ran in the app (its study is not kept); the trials table below is what is stored.")
        else:
            show_study(stored_study, "sw_stored")
holdout = next((t for t in trials_rows if t["state"] == "holdout"), None)
if holdout is not None and study_mod is not None:
    from memory_engine.evaluation.generalization import Generalization

    show_generalization(Generalization.from_dict(holdout["metrics"]["generalization"]), "sw_stored_gen")
flat = pd.json_normalize([{"trial": t["trial_number"], "state": t["state"], "duration_s": t["duration_s"],
                           "params": t["params"], "metrics": t["metrics"]} for t in trials_rows])
st.caption(f"{len(trials_rows)} trials")
st.dataframe(flat, hide_index=True, width="stretch")
