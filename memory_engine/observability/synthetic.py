"""Emit engine-shaped spans through a real OpenTelemetry tracer.

These helpers produce ``memory.write`` / ``memory.retrieve`` / ``memory.answer``
spans with exactly the TRACES.md attributes (plus the documented extensions),
at explicit times, through whatever ``Tracer`` they are given. Tests use them
to drive the real exporter before the engine exists; ``memwb`` uses
:func:`emit_workload` to write the demo files in ``traces/``. They are a
workload generator, not a fake engine: they never touch the warehouse.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from opentelemetry.trace import Status, StatusCode, Tracer

from .records import SPAN_ANSWER, SPAN_RETRIEVE, SPAN_WRITE

NS_PER_MS = 1_000_000
NS_PER_DAY = 86_400 * 1_000_000_000


def _span_hex(span: Any) -> str:
    return format(span.get_span_context().span_id, "016x")


def emit_write(
    tracer: Tracer,
    *,
    at_ns: int,
    user_id: str,
    memory_id: str | None,
    outcome: str = "stored",
    importance: float = 0.7,
    content: str = "",
    memory_type: str = "semantic",
    tenant_id: str = "default",
    session_id: str = "s1",
    reject_reason: str | None = None,
    superseded_ids: Sequence[str] = (),
    config_hash: str = "cfg000000000",
    embedding_version: str = "e5-small:1",
    duration_ms: float = 4.0,
) -> str:
    """One ``memory.write`` span; returns its span id (hex)."""
    attrs: dict[str, Any] = {
        "memory.tenant_id": tenant_id,
        "memory.user_id": user_id,
        "memory.session_id": session_id,
        "memory.type": memory_type,
        "memory.write_outcome": outcome,
        "memory.importance": importance,
        "memory.config_hash": config_hash,
        "memory.embedding_version": embedding_version,
        "memory.content": content,
    }
    if memory_id is not None:
        attrs["memory.id"] = memory_id
    if reject_reason:
        attrs["memory.reject_reason"] = reject_reason
    if superseded_ids:
        attrs["memory.superseded_ids"] = list(superseded_ids)
    span = tracer.start_span(SPAN_WRITE, start_time=at_ns, attributes=attrs)
    sid = _span_hex(span)
    span.end(end_time=at_ns + int(duration_ms * NS_PER_MS))
    return sid


def emit_retrieve(
    tracer: Tracer,
    *,
    at_ns: int,
    user_id: str,
    ids: Sequence[str],
    scores: Sequence[float] | None = None,
    sources: Sequence[str] | None = None,
    contents: Sequence[str] | None = None,
    query: str = "what do I like?",
    tenant_id: str = "default",
    session_id: str = "s1",
    top_k: int = 5,
    degraded: bool = False,
    config_hash: str = "cfg000000000",
    embedding_version: str = "e5-small:1",
    fusion: str = "weighted",
    latency_ms: float = 12.0,
    error: str | None = None,
) -> str:
    """One ``memory.retrieve`` span (latency = ``latency_ms``); returns its span id."""
    n = len(ids)
    attrs: dict[str, Any] = {
        "memory.tenant_id": tenant_id,
        "memory.user_id": user_id,
        "memory.session_id": session_id,
        "memory.query": query,
        "memory.top_k": top_k,
        "memory.retrieved_ids": list(ids),
        "memory.retrieved_scores": list(scores) if scores is not None else [round(0.9 - 0.1 * i, 3) for i in range(n)],
        "memory.retrieved_sources": list(sources) if sources is not None else ["vector"] * n,
        "memory.retrieved_count": n,
        "memory.degraded": degraded,
        "memory.config_hash": config_hash,
        "memory.embedding_version": embedding_version,
        "memory.fusion": fusion,
    }
    if contents is not None:
        attrs["memory.retrieved_contents"] = list(contents)
    span = tracer.start_span(SPAN_RETRIEVE, start_time=at_ns, attributes=attrs)
    if error:
        exc = RuntimeError(error)
        span.record_exception(exc, timestamp=at_ns)
        span.set_status(Status(StatusCode.ERROR, error))
    sid = _span_hex(span)
    span.end(end_time=at_ns + int(latency_ms * NS_PER_MS))
    return sid


def emit_answer(
    tracer: Tracer,
    *,
    at_ns: int,
    user_id: str,
    retrieve_span_id: str,
    cited_ids: Sequence[str],
    answer_text: str = "",
    tenant_id: str = "default",
    session_id: str = "s1",
    duration_ms: float = 300.0,
) -> str:
    """One ``memory.answer`` span linked to a retrieval; returns its span id."""
    attrs = {
        "memory.tenant_id": tenant_id,
        "memory.user_id": user_id,
        "memory.session_id": session_id,
        "memory.cited_ids": list(cited_ids),
        "memory.retrieve_span_id": retrieve_span_id,
        "memory.answer_text": answer_text,
    }
    span = tracer.start_span(SPAN_ANSWER, start_time=at_ns, attributes=attrs)
    sid = _span_hex(span)
    span.end(end_time=at_ns + int(duration_ms * NS_PER_MS))
    return sid


_TOPICS = (
    ("prefers green tea over coffee", "what drink do I like?"),
    ("lives in Lyon since 2021", "where do I live?"),
    ("allergic to peanuts", "any food allergies?"),
    ("works as a backend engineer", "what is my job?"),
    ("order number A-7731 was late", "what happened to my order?"),
    ("speaks French and Mandarin", "which languages do I speak?"),
    ("plays the cello on Sundays", "what do I do on weekends?"),
    ("vegetarian since last year", "what do I eat?"),
)


def emit_workload(
    tracer: Tracer,
    *,
    start_ns: int,
    days: int = 10,
    users: int = 4,
    writes_per_user_day: int = 3,
    retrievals_per_user_day: int = 4,
    seed: int = 0,
    config_hash: str = "cfg000000000",
) -> dict[str, int]:
    """A seeded, realistic mix of writes, retrievals and answers over ``days``.

    Roughly 15% of writes are rejected, some retrievals are degraded (empty),
    most retrievals get an answer citing one or two retrieved memories.
    Returns counts per span name.
    """
    rng = random.Random(seed)
    counts = {SPAN_WRITE: 0, SPAN_RETRIEVE: 0, SPAN_ANSWER: 0}
    memories: dict[str, list[tuple[str, str]]] = {f"user-{u}": [] for u in range(users)}
    seq = 0
    for day in range(days):
        for u in range(users):
            user = f"user-{u}"
            base = start_ns + day * NS_PER_DAY + u * 600 * 1_000_000_000
            for w in range(writes_per_user_day):
                seq += 1
                text, _ = rng.choice(_TOPICS)
                at = base + w * 90 * 1_000_000_000 + rng.randrange(60) * 1_000_000_000
                if rng.random() < 0.15:
                    emit_write(
                        tracer, at_ns=at, user_id=user, memory_id=None, outcome="rejected",
                        importance=round(rng.uniform(0.1, 0.5), 2), reject_reason="below_threshold",
                        content="ok thanks", session_id=f"{user}-d{day}", config_hash=config_hash,
                    )  # fmt: skip
                else:
                    mid = f"mem-{seq:06d}"
                    memories[user].append((mid, text))
                    emit_write(
                        tracer, at_ns=at, user_id=user, memory_id=mid, importance=round(rng.uniform(0.6, 0.95), 2),
                        content=f"{user} {text}", session_id=f"{user}-d{day}", config_hash=config_hash,
                    )  # fmt: skip
                counts[SPAN_WRITE] += 1
            for r in range(retrievals_per_user_day):
                at = base + 3600 * 1_000_000_000 + r * 300 * 1_000_000_000
                pool = memories[user]
                degraded = rng.random() < 0.03
                hits = [] if degraded or not pool else rng.sample(pool, min(len(pool), rng.randint(1, 5)))
                _, query = rng.choice(_TOPICS)
                rid = emit_retrieve(
                    tracer, at_ns=at, user_id=user, ids=[h[0] for h in hits],
                    contents=[f"{user} {h[1]}" for h in hits],
                    sources=[rng.choice(("vector", "keyword", "vector+keyword", "recent", "fact")) for _ in hits],
                    query=query, session_id=f"{user}-d{day}", degraded=degraded, config_hash=config_hash,
                    latency_ms=round(rng.lognormvariate(2.5, 0.5), 3),
                    error="qdrant unavailable" if degraded else None,
                )  # fmt: skip
                counts[SPAN_RETRIEVE] += 1
                if hits and rng.random() < 0.8:
                    cited = [h[0] for h in hits[: rng.randint(1, min(2, len(hits)))]]
                    emit_answer(
                        tracer, at_ns=at + 20 * NS_PER_MS, user_id=user, retrieve_span_id=rid, cited_ids=cited,
                        answer_text=" ".join(f"[{c}]" for c in cited), session_id=f"{user}-d{day}",
                    )  # fmt: skip
                    counts[SPAN_ANSWER] += 1
    return counts
