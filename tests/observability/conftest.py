"""Fixtures: a real DuckDB warehouse file per test and a real OTel TracerProvider exporting into it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from memory_engine.observability.exporter import DuckDBSpanExporter
from memory_engine.observability.warehouse import Warehouse


@pytest.fixture(scope="session")
def otel_data() -> Path:
    """The public OTLP files in ``../shared/data/otel`` (read-only)."""
    p = Path(__file__).resolve().parents[3] / "shared" / "data" / "otel"
    if not p.is_dir():
        pytest.skip(f"public trace data not found at {p}")
    return p


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Warehouse]:
    w = Warehouse(tmp_path / "ws" / "warehouse.duckdb")
    yield w
    w.close()


@pytest.fixture
def provider(wh: Warehouse) -> Iterator[TracerProvider]:
    tp = TracerProvider(resource=Resource.create({"service.name": "memwb"}))
    tp.add_span_processor(SimpleSpanProcessor(DuckDBSpanExporter(wh)))
    yield tp
    tp.shutdown()


@pytest.fixture
def tracer(provider: TracerProvider):
    return provider.get_tracer("memwb")
