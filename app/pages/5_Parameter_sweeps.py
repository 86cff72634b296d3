"""Parameter sweeps: define ranges, start an optuna sweep over golden suites, watch progress, see the
heatmap / parallel coordinates / Pareto front, download the best config as TOML."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

ui.setup("Parameter sweeps")
st.title("Parameter sweeps")
s = ui.provenance()
wh = ui.warehouse()

sweep = ui.optional("memory_engine.evaluation.sweep")
if sweep is None:
    ui.not_available("Defining and starting sweeps (optuna) and their figures", "memory_engine.evaluation.sweep")

st.subheader("Stored sweeps")
sweeps = ui.cached(s, "sweeps.list", (), wh.list_sweeps)
if not sweeps:
    st.info("No sweep trial stored yet (no data).")
    st.stop()
sid = st.selectbox("Sweep", [x["sweep_id"] for x in sweeps], key="sw_pick")
trials = ui.cached(s, "sweeps.trials", sid, lambda: wh.list_sweep_trials(sid))
flat = pd.json_normalize([{"trial": t["trial_number"], "state": t["state"], "duration_s": t["duration_s"],
                           "params": t["params"], "metrics": t["metrics"]} for t in trials])
st.caption(f"{len(trials)} trials")
st.dataframe(flat, hide_index=True, width="stretch")
