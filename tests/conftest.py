"""Shared fixtures: one real embedder per session (the bundled model), fresh
in-memory engines per test on the real qdrant-edge engine."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.fixture(scope="session")
def embedder():
    from memory_engine import EngineConfig
    from memory_engine.embedding import make_embedder

    return make_embedder(EngineConfig().embedding)


@pytest.fixture
def make_engine(embedder, tmp_path):
    """Factory: make_engine(overrides={...}, span_processors=[...]) -> in-memory engine, closed after the test."""
    from memory_engine import EngineConfig, MemoryEngine

    made = []

    def _make(overrides=None, span_processors=(), **kw):
        cfg = EngineConfig(workspace=str(tmp_path / "ws"))
        if overrides:
            cfg = cfg.with_overrides(overrides)
        eng = MemoryEngine.in_memory(cfg, embedder=kw.pop("embedder", embedder), span_processors=span_processors)
        made.append(eng)
        return eng

    yield _make
    for e in made:
        e.close()


@pytest.fixture
def quiet_engine_factory(make_engine):
    """Factory: quiet_engine_factory({...}) -> in-memory engine without spans and without touch-on-hit (a hit
    would refresh the memory's access time and move recency between the queries of one test), on the shared
    embedder, closed after the test even when it fails."""

    def _make(overrides=None):
        return make_engine({"tracing.enabled": False, "retrieval.touch_on_hit": False, **(overrides or {})})

    return _make


@pytest.fixture
def engine(make_engine):
    return make_engine()


@pytest.fixture
def t0():
    return T0
