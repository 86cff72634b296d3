"""Closing releases every file (issue 15: ``eng.close()`` kept ``warehouse.duckdb`` locked for the life of
the process): after ``Workspace.close()`` another process opens the DuckDB file read-write and the edge
shard (whose WAL edge locks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memory_engine import EngineConfig
from memory_engine.workspace import open_workspace

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import sys, duckdb
from memory_engine.store.edge import EdgeStore
con = duckdb.connect(sys.argv[1]); print(con.execute("SELECT count(*) FROM spans").fetchone()[0]); con.close()
s = EdgeStore(sys.argv[2]); s.ensure_collection(int(sys.argv[3])); print(s.total_points()); s.close()
"""


def test_closing_the_workspace_releases_the_warehouse_and_the_shard(embedder, tmp_path):
    ws = open_workspace(EngineConfig(workspace=str(tmp_path / "ws")), embedder=embedder)
    ws.engine.add("I prefer aisle seats on long flights", user_id="u")
    ws.engine.retrieve("seat preference", user_id="u")
    paths = ws.paths
    ws.close()
    r = subprocess.run([sys.executable, "-c", _PROBE, str(paths.warehouse), str(paths.qdrant), str(embedder.dim)],
                       capture_output=True, text=True, cwd=REPO, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    spans, points = (int(x) for x in r.stdout.split())
    assert spans >= 2 and points == 1
