"""Workbench fixtures: one small demo workspace built once per session through the
real engine (qdrant-edge shard, bundled model, DuckDB file), plus a copy of it for
the browser test (DuckDB allows one writer process per file)."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_engine import demo

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SMALL = replace(demo.DemoOptions(), max_cases_per_suite=1, locomo_turns=30, locomo_questions=6,
                repeat_after_days=(3.0,))  # fmt: skip


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory):
    """(workspace A for in-process AppTests, workspace B for the browser test, the build report)."""
    from memory_engine.observability.warehouse import Warehouse

    root = tmp_path_factory.mktemp("wb")
    ws = root / "A"
    rep = demo.build_demo(ws, now=NOW, options=SMALL)
    Warehouse.open(ws).close()
    shutil.copytree(ws, root / "B")
    return ws, root / "B", rep


@pytest.fixture(scope="session")
def demo_ws(demo_build):
    ws, _, _ = demo_build
    old = os.environ.get("MEMWB_HOME")
    os.environ["MEMWB_HOME"] = str(ws)
    yield Path(ws)
    if old is None:
        os.environ.pop("MEMWB_HOME", None)
    else:
        os.environ["MEMWB_HOME"] = old


@pytest.fixture(scope="session")
def wh(demo_ws):
    from memory_engine.observability.warehouse import Warehouse

    return Warehouse.open(demo_ws)
