"""Citation review: a sampled queue of cited memories, verdict buttons (keyboard 1 / 2 / 3, n = skip),
accuracy with its Wilson interval per reviewer and overall, and Cohen's kappa between reviewers."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.observability import metrics as m  # noqa: E402
from memory_engine.observability.verdicts import Verdict, record_verdict, sample_citations  # noqa: E402

ui.setup("Citation review")
st.title("Citation review")
s = ui.provenance()
wh = ui.warehouse()

sb = st.sidebar
reviewer = sb.text_input("Reviewer name", value=st.session_state.get("reviewer", ""), key="reviewer_input").strip()
size = sb.number_input("Queue size", min_value=1, max_value=500, value=20, step=5, key="queue_size")
seed = sb.number_input("Sampler seed", min_value=0, value=0, step=1, key="queue_seed")

if not reviewer:
    st.info("Enter your reviewer name in the sidebar to draw a review queue.")
else:
    st.session_state["reviewer"] = reviewer
    qkey = (reviewer, int(size), int(seed))
    if st.session_state.get("queue_key") != qkey:
        st.session_state["queue"] = sample_citations(wh, int(size), int(seed), reviewer=reviewer)
        st.session_state["queue_key"] = qkey
        st.session_state["queue_pos"] = 0
        st.session_state["queue_done"] = 0
    queue = st.session_state["queue"]
    pos = st.session_state["queue_pos"]
    done = st.session_state["queue_done"]
    total = len(queue)
    st.progress(min(1.0, pos / total) if total else 1.0, text=f"{pos}/{total} reviewed in this queue ({done} verdicts)")
    if total == 0:
        st.success("Nothing to review: every cited memory has a verdict from you (or nothing was cited yet).")
    elif pos >= total:
        st.success(f"Queue finished: {done} verdicts stored. Change the seed or size for another queue.")
    else:
        item = queue[pos]
        st.markdown(f"**Question** ({item.user_id}, {item.day}, retrieval `{item.retrieve_span_id}`)")
        st.write(item.query or "(query not recorded)")
        st.markdown("**Answer**")
        st.markdown(viz.highlight_citations(item.answer_text or "", [item.memory_id]), unsafe_allow_html=True)
        st.markdown(f"**Cited memory** `mem-{item.memory_id}` (rank {item.rank})")
        st.info(item.content or "(content not recorded on the span)")
        st.text_input("Note (optional)", key=f"note_{pos}")

        def judge(v: Verdict) -> None:
            note = (st.session_state.get(f"note_{pos}") or "").strip() or None
            record_verdict(wh, item.retrieve_span_id, item.memory_id, v, reviewer=reviewer, note=note)
            st.session_state["queue_pos"] = pos + 1
            st.session_state["queue_done"] = done + 1

        def skip() -> None:
            st.session_state["queue_pos"] = pos + 1

        b1, b2, b3, b4 = st.columns(4)
        b1.button("Correct (1)", key="v_correct", on_click=judge, args=(Verdict.CORRECT,), type="primary")
        b2.button("Incorrect (2)", key="v_incorrect", on_click=judge, args=(Verdict.INCORRECT,))
        b3.button("Unsure (3)", key="v_unsure", on_click=judge, args=(Verdict.UNSURE,))
        b4.button("Next / skip (n)", key="v_next", on_click=skip)
        # digits, not letters: Streamlit itself binds "c" (clear caches) and "r" (rerun)
        ui.keyboard_shortcuts(v_correct="1", v_incorrect="2", v_unsure="3", v_next=["n", "arrowright"])
        st.caption("Keyboard: 1 = correct, 2 = incorrect, 3 = unsure, n or → = next (outside the note box).")

st.divider()
st.subheader("Citation accuracy")
s = ui.summary()  # a verdict just stored changes the version
overall = ui.cached(s, "review.accuracy", (), lambda: m.citation_accuracy(wh))
per = ui.cached(s, "review.by_reviewer", (), lambda: m.citation_accuracy_by_reviewer(wh))
ui.tile(st.columns(3)[0], viz.kpi_tile("Overall accuracy", overall))
rows = [
    {"reviewer": name, "accuracy": viz.kpi_tile(name, v).value, "correct/judged": f"{int(v.numerator or 0)}/{v.denominator}",
     "95% interval": f"{v.low:.2f}–{v.high:.2f}" if v.low is not None else "no data", "unsure": v.extra.get("unsure", 0)}
    for name, v in per.items()
]
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
agree = overall.extra.get("agreement") or []
st.markdown("**Agreement between reviewers (Cohen's kappa)**")
if agree:
    st.dataframe(viz.records_frame(agree, ["reviewer_a", "reviewer_b", "n", "observed", "expected", "kappa", "note"]),
                 hide_index=True, width="stretch")  # fmt: skip
    st.caption("kappa = (observed - chance) / (1 - chance): 1 perfect agreement, 0 no better than chance, "
               "undefined when both reviewers used one single label. Overall accuracy counts each citation once, "
               "with its latest verdict.")  # fmt: skip
else:
    st.caption("No citation judged by two reviewers yet.")
