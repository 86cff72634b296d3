"""Warehouse schema as forward migrations.

``MIGRATIONS[i]`` takes a warehouse from version ``i`` to ``i + 1``; opening a
warehouse read-write applies the missing ones in order, each in its own
transaction, and records them in ``schema_version``. Never edit a released
migration: append a new one.

Times: span times are Unix epoch nanoseconds (``BIGINT``); bookkeeping times
(``judged_at``, ``started_at``...) are UTC ``TIMESTAMP`` values. Ids are
lowercase hex.
"""

from __future__ import annotations

_V1 = """
CREATE TABLE spans (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    parent_span_id VARCHAR,
    name VARCHAR NOT NULL,
    kind VARCHAR,
    service VARCHAR,
    scope VARCHAR,
    start_ns BIGINT NOT NULL,
    end_ns BIGINT NOT NULL,
    duration_ms DOUBLE,
    status_code VARCHAR,
    status_message VARCHAR,
    attributes JSON,
    resource JSON,
    events JSON,
    warnings VARCHAR[],
    source VARCHAR,
    ingested_at TIMESTAMP,
    PRIMARY KEY (trace_id, span_id)
);
CREATE TABLE retrievals (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    start_ns BIGINT NOT NULL,
    end_ns BIGINT NOT NULL,
    latency_ms DOUBLE,
    service VARCHAR,
    status_code VARCHAR,
    tenant_id VARCHAR,
    user_id VARCHAR,
    session_id VARCHAR,
    query VARCHAR,
    rewritten_query VARCHAR,
    top_k INTEGER,
    retrieved_count INTEGER,
    degraded BOOLEAN,
    config_hash VARCHAR,
    embedding_version VARCHAR,
    fusion VARCHAR,
    retrieved_ids VARCHAR[],
    retrieved_scores DOUBLE[],
    retrieved_sources VARCHAR[],
    retrieved_contents VARCHAR[],
    origin VARCHAR,
    PRIMARY KEY (trace_id, span_id)
);
CREATE TABLE writes (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    start_ns BIGINT NOT NULL,
    end_ns BIGINT NOT NULL,
    latency_ms DOUBLE,
    service VARCHAR,
    status_code VARCHAR,
    tenant_id VARCHAR,
    user_id VARCHAR,
    session_id VARCHAR,
    memory_id VARCHAR,
    memory_type VARCHAR,
    outcome VARCHAR,
    reject_reason VARCHAR,
    importance DOUBLE,
    superseded_ids VARCHAR[],
    config_hash VARCHAR,
    embedding_version VARCHAR,
    content VARCHAR,
    PRIMARY KEY (trace_id, span_id)
);
CREATE TABLE answers (
    trace_id VARCHAR NOT NULL,
    span_id VARCHAR NOT NULL,
    start_ns BIGINT NOT NULL,
    end_ns BIGINT NOT NULL,
    latency_ms DOUBLE,
    service VARCHAR,
    status_code VARCHAR,
    tenant_id VARCHAR,
    user_id VARCHAR,
    session_id VARCHAR,
    retrieve_span_id VARCHAR,
    cited_ids VARCHAR[],
    answer_text VARCHAR,
    PRIMARY KEY (trace_id, span_id)
);
CREATE TABLE verdicts (
    retrieve_span_id VARCHAR NOT NULL,
    memory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL CHECK (verdict IN ('correct', 'incorrect', 'unsure')),
    note VARCHAR,
    judged_at TIMESTAMP NOT NULL,
    PRIMARY KEY (retrieve_span_id, memory_id, reviewer)
);
CREATE TABLE eval_runs (
    run_id VARCHAR PRIMARY KEY,
    suite VARCHAR,
    config JSON,
    config_hash VARCHAR,
    git_commit VARCHAR,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    metrics JSON,
    meta JSON
);
CREATE TABLE eval_queries (
    run_id VARCHAR NOT NULL,
    case_id VARCHAR NOT NULL,
    query_id VARCHAR NOT NULL,
    metrics JSON,
    details JSON,
    PRIMARY KEY (run_id, case_id, query_id)
);
CREATE TABLE sweep_trials (
    sweep_id VARCHAR NOT NULL,
    trial_number INTEGER NOT NULL,
    params JSON,
    metrics JSON,
    duration_s DOUBLE,
    state VARCHAR,
    created_at TIMESTAMP,
    PRIMARY KEY (sweep_id, trial_number)
);
CREATE TABLE ingest_batches (
    recorded_at TIMESTAMP NOT NULL,
    source VARCHAR,
    received BIGINT,
    stored BIGINT,
    duplicate BIGINT,
    rejected BIGINT,
    warnings BIGINT
);
CREATE TABLE health_reports (
    recorded_at TIMESTAMP NOT NULL,
    composite DOUBLE,
    report JSON,
    alerts JSON
);
"""

# v2: the derived tables lose their primary keys. Each derived row belongs to exactly one span and is
# inserted in the same transaction as its span, exactly when that span is newly stored (the spans key
# decides), so a second index per table only re-checked what the spans index had decided, and it cost
# about 0.7 s per 200,000 ingested spans (benchmarks/ingest.py: 45.8k -> 57.9k spans/s best of 3).
# DuckDB cannot drop a primary key in place: the tables are copied.
_V2 = "\n".join(
    f"""
CREATE TABLE {t}_v2 AS SELECT * FROM {t};
DROP TABLE {t};
ALTER TABLE {t}_v2 RENAME TO {t};
ALTER TABLE {t} ALTER COLUMN trace_id SET NOT NULL;
ALTER TABLE {t} ALTER COLUMN span_id SET NOT NULL;
ALTER TABLE {t} ALTER COLUMN start_ns SET NOT NULL;
ALTER TABLE {t} ALTER COLUMN end_ns SET NOT NULL;
"""
    for t in ("retrievals", "writes", "answers")
)

MIGRATIONS: tuple[str, ...] = (_V1, _V2)
"""Forward migrations; index ``i`` upgrades version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
