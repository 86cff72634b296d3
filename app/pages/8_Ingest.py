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
from memory_engine.errors import MemoryEngineError  # noqa: E402
from memory_engine.observability.ingest import ingest_file  # noqa: E402

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
                st.error(f"{up.name}: {e}")
                rows.append({"file": up.name, "error": str(e)})
                continue
        rows.append({"file": up.name, "received": res.received, "ingested": res.ingested, "duplicate": res.duplicate,
                     "rejected": res.rejected, "malformed": res.malformed, "warnings": res.warnings})
        for p in res.problems[:20]:
            st.warning(str(p))
    level, message = viz.ingest_outcome(rows)
    getattr(st, level)(message)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

st.subheader("Live collector")
collect = ui.optional("memory_engine.cli.trace_cmds")
port = 4318  # the OTLP/HTTP default port (OpenTelemetry specification)
st.markdown(
    f"Run `memwb collect --port {port}` beside the app and point an agent's OTLP/HTTP span exporter at "
    f"`http://127.0.0.1:{port}/v1/traces` (protobuf or JSON). Spans land in this workspace's warehouse with "
    "source `http`; the pages show them on their next run."
)
st.code(f"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:{port}/v1/traces", language="bash")
if collect is None:
    st.caption("`memwb collect` has not landed in this build yet.")

st.subheader("Ingestion health")
h = ui.cached(s, "ingest.health", (), wh.ingestion_health)
cols = st.columns(6)
for col, (name, val) in zip(cols, [("received", h.received), ("stored", h.stored), ("duplicate", h.duplicate),
                                   ("rejected", h.rejected), ("warnings", h.warnings),
                                   ("orphaned parents", h.orphaned_parents)], strict=True):
    col.metric(name, f"{val:,}")
