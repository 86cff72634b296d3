"""Fixtures shared by the retrieval tests."""

from __future__ import annotations

import pytest

from memory_engine import EngineConfig, MemoryEngine


@pytest.fixture(scope="module")
def quiet_engine():
    """One in-memory engine per test module, without spans and without touch-on-hit (a hit would refresh
    the memory's access time and move recency between the queries of one module)."""
    eng = MemoryEngine.in_memory(EngineConfig().with_overrides({"tracing.enabled": False,
                                                                "retrieval.touch_on_hit": False}))
    yield eng
    eng.close()
