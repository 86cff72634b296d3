"""Ingest: upload OTLP JSON / JSON-lines / protobuf trace files and see the ingest summary;
the `memwb collect` endpoint to point an agent's OTLP/HTTP exporter at."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app/ holds the shared layout module
import workbench_ui as ui  # noqa: E402

from memory_engine import viz  # noqa: E402
from memory_engine.errors import MemoryEngineError, TraceIngestError  # noqa: E402
from memory_engine.observability.ingest import ingest_file  # noqa: E402
from memory_engine.observability.spool import find_owner, pending  # noqa: E402

ui.setup("Ingest")
st.title("Ingest traces")
s = ui.provenance()
wh = ui.warehouse()

uploads = st.file_uploader("OTLP trace files (.json, .jsonl, .pb, .gz)", accept_multiple_files=True, key="ing_files")
if uploads and st.button("Ingest", key="ing_go", type="primary"):
    rows = []
    for up in uploads:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(up.name).name  # the file name becomes the span source ("file:<name>")
            path.write_bytes(up.getvalue())
            try:
                res = ingest_file(wh, path)
            except MemoryEngineError as e:
                # a TraceIngestError names the temporary copy already: show the uploaded name once, then why
                why = e.reason if isinstance(e, TraceIngestError) else str(e)
                st.error(f"{up.name}: {why}")
                rows.append({"file": up.name, "error": why})
                continue
        rows.append({"file": up.name, "received": res.received, "ingested": res.ingested, "duplicate": res.duplicate,
                     "rejected": res.rejected, "malformed": res.malformed, "warnings": res.warnings})
        for p in res.problems[:20]:
            st.warning(str(p))
    level, message = viz.ingest_outcome(rows)
    getattr(st, level)(message)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

st.subheader("Live OTLP receiver")
owner = find_owner(ui.workspace())
if owner is not None and owner.traces_url:
    st.markdown(f"This workspace's {owner.kind} (pid {owner.pid}) receives OTLP/HTTP spans (protobuf or JSON) at "
                f"`{owner.traces_url}`: point an agent's span exporter there. Spans land in this workspace's "
                "warehouse with source `http`; the pages show them on their next run.")  # fmt: skip
    st.code(f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT={owner.traces_url}", language="bash")
else:
    st.markdown("`memwb app` receives OTLP/HTTP itself (port 4318 by default, `--otlp-port`); this app was "
                "started another way and has no receiver. `memwb collect` on this workspace would wait for the "
                "warehouse: start the workbench with `memwb app` instead, then point exporters at:")  # fmt: skip
    st.code("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces", language="bash")
st.caption("Commands that write to this workspace while the app runs (`memwb ingest`, `eval`, `ci`, `sweep`, an "
           "engine in another process) queue their writes in the workspace spool; the app applies them within "
           f"a second. Waiting now: {pending(ui.workspace())}.")

st.subheader("Ingestion health")
h = ui.cached(s, "ingest.health", (), wh.ingestion_health)
cols = st.columns(6)
for col, (name, val) in zip(cols, [("received", h.received), ("stored", h.stored), ("duplicate", h.duplicate),
                                   ("rejected", h.rejected), ("warnings", h.warnings),
                                   ("orphaned parents", h.orphaned_parents)], strict=True):
    col.metric(name, f"{val:,}")
