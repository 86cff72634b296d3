"""Memory explorer: one user's memories by type and status, supersede chains, facts with history,
forget one memory or erase the user (with confirmation); the store is read fresh on every run."""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.lifecycle.forget import EraseMode  # noqa: E402

ui.setup("Memory explorer")
st.title("Memory explorer")
s = ui.provenance()
wh = ui.warehouse()
eng = ui.engine()

owners = ui.cached(s, "explorer.owners", (), lambda: ui.q.known_owners(wh))
labels = [f"{t} / {u}" for t, u in owners]
sb = st.sidebar
pick = sb.selectbox("User (tenant / user)", ["(type below)", *labels], key="ex_owner")
tenant_in = sb.text_input("Tenant", value="default", key="ex_tenant")
user_in = sb.text_input("User id", value="", key="ex_user")
if pick != "(type below)":
    tenant, user = owners[labels.index(pick)]
else:
    tenant, user = tenant_in.strip() or "default", user_in.strip()

if flash := st.session_state.pop("ex_flash", None):
    st.success(flash)

if not user:
    st.info("Choose a user in the sidebar.")
    st.stop()

records = eng.list_memories(user_id=user, tenant_id=tenant)
st.subheader(f"{user} ({tenant}): {len(records)} memories")
if not records:
    st.write("No memories stored for this user (erased, or never written).")
else:
    df = viz.records_frame(records, ["id", "memory_type", "status", "flags", "content", "importance", "source",
                                     "access_count", "superseded_by", "fact_key"])  # fmt: skip
    counts = df.groupby(["memory_type", "status"]).size().reset_index(name="count")
    st.plotly_chart(viz.stacked_count_figure(counts, x="memory_type", color="status", title="Memories by type and status"),
                    width="stretch", key="ex_counts")  # fmt: skip
    c1, c2 = st.columns(2)
    types = c1.multiselect("Types", sorted(df["memory_type"].unique()), key="ex_types")
    statuses = c2.multiselect("Statuses", sorted(df["status"].unique()), key="ex_status")
    view = df
    if types:
        view = view[view["memory_type"].isin(types)]
    if statuses:
        view = view[view["status"].isin(statuses)]
    # a grid cell shows one line: a long memory (a Chinese address, a dialogue turn) is cut at the column's
    # edge, so the selected row (else the first) is shown whole below the table
    event = st.dataframe(view, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key="ex_table", column_config={"content": st.column_config.TextColumn(width="large")})
    sel = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if len(view):
        row = view.iloc[sel[0] if sel and sel[0] < len(view) else 0]
        st.caption(f"Memory {row['id']} ({row['memory_type']}, {row['status']})"
                   + ("" if sel else ": select a row to show another"))
        st.text(str(row["content"]), wrap=True)

    st.subheader("Supersede chains")
    edges = viz.supersede_edges(records)
    if edges.empty:
        st.caption("No memory of this user was superseded.")
    else:
        st.dataframe(edges, hide_index=True, width="stretch")

st.subheader("Facts")
facts = eng.facts(user_id=user, tenant_id=tenant)
if not facts:
    st.caption("No structured facts.")
else:
    st.dataframe([{"key": k, "value": str(v)} for k, v in sorted(facts.items())], hide_index=True, width="stretch")
    key = st.selectbox("History of fact", sorted(facts), key="ex_fact")
    hist = eng.fact_history(key, user_id=user, tenant_id=tenant)
    st.dataframe(viz.records_frame(hist, ["id", "fact_value", "status", "created_at", "superseded_by"]),
                 hide_index=True, width="stretch")

st.divider()
st.subheader("Forget / erase")
c1, c2 = st.columns(2)
with c1:
    st.markdown("**Forget one memory**")
    ids = [r.id for r in records]
    target = st.selectbox("Memory", ids, format_func=lambda i: f"{i} — {next(r.content for r in records if r.id == i)[:60]}",
                          key="ex_forget_id") if ids else None
    sure = st.checkbox("I am sure", key="ex_forget_sure")
    if st.button("Forget memory", key="ex_forget", disabled=not ids):
        if not sure:
            st.warning("Tick 'I am sure' first.")
        else:
            ok = eng.forget(target, user_id=user, tenant_id=tenant)
            st.session_state["ex_flash"] = f"Forgot {target}." if ok else f"{target} was not found."
            st.rerun()
with c2:
    st.markdown("**Erase this user** (store + warehouse rows)")
    mode = st.selectbox("Warehouse rows", [m.value for m in EraseMode], key="ex_erase_mode")
    confirm = st.text_input("Type the user id to confirm", key="ex_erase_confirm")
    if st.button("Erase user", key="ex_erase", type="primary"):
        if confirm.strip() != user:
            st.warning("The confirmation does not match the user id.")
        else:
            rep = ui.opened().erase_user(user, tenant_id=tenant, mode=mode)
            st.session_state["ex_flash"] = (f"Erased {user}: {rep.store} memories from the store, warehouse "
                                            f"{rep.warehouse_mode} {sum(rep.warehouse.values())} rows.")
            st.rerun()
