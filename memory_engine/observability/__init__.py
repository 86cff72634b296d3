"""Observability: span records, the DuckDB trace warehouse, OTLP ingest, metrics.

Import the submodules you need (``warehouse``, ``exporter``, ``ingest``,
``collector``, ``metrics``, ``verdicts``, ``explore``, ``health``); the names
below are the ones the engine, the app and the evaluation code use. Importing
this package does not start anything and does not import streamlit.
"""

from .exporter import DuckDBSpanExporter, span_processors
from .health import HealthReport, HealthWeights, health_report
from .ingest import IngestSummary, ingest_file, ingest_files
from .metrics import Bucket, Filters, Metric, MetricValue
from .records import SpanRecord, decode_readable_span
from .warehouse import Warehouse

__all__ = [
    "Bucket",
    "DuckDBSpanExporter",
    "Filters",
    "HealthReport",
    "HealthWeights",
    "IngestSummary",
    "Metric",
    "MetricValue",
    "SpanRecord",
    "Warehouse",
    "decode_readable_span",
    "health_report",
    "ingest_file",
    "ingest_files",
    "span_processors",
]
