"""BM25 document-side weights come from the ``keyword`` config section (issue 16): by
default no length normalisation (b = 0), so a long memory naming the query's rare word
scores as high on the keyword route as a short one; ``keyword.b`` brings Lucene's
normalisation back. Real engine, bundled e5, qdrant-edge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_engine import EngineConfig, MemoryEngine
from memory_engine.config import KeywordSection
from memory_engine.scope import Scope
from memory_engine.text import content_terms, sparse_document, sparse_query

T0 = datetime(2026, 3, 1, 9, tzinfo=UTC)
SHORT = "Pottery class tonight."
LONG = ("I signed up for a pottery class at the community center last week and made a blue bowl for my "
        "mother, a small vase for my sister and a plate for the kitchen.")


def test_sparse_document_defaults_follow_the_keyword_section():
    kw = KeywordSection()
    terms = sorted(content_terms(LONG))
    assert sparse_document(terms) == sparse_document(terms, kw.k1, kw.b, kw.avg_len)
    # b = 0 and distinct terms: every document weight is 1 (IDF-weighted term overlap)
    assert all(v == pytest.approx(1.0) for v in sparse_document(terms).values)
    short = sparse_document(sorted(content_terms(SHORT)), 1.2, 0.75, 12.0)
    long = sparse_document(terms, 1.2, 0.75, 12.0)
    assert max(short.values) > max(long.values)  # Lucene's b = 0.75 favours the short memory


def _scores(cfg: EngineConfig) -> dict[str, float]:
    eng = MemoryEngine.in_memory(cfg.with_overrides({"tracing.enabled": False}))
    try:
        for i, t in enumerate((SHORT, LONG)):
            eng.add(t, user_id="kw", memory_type="episodic", now=T0 + timedelta(minutes=i))
        scope = Scope("default", "kw", eng.embedder.version)
        rows = eng.store.search_sparse(sparse_query(content_terms("pottery")), scope.filter(), 5)
        return {p.payload["content"]: p.score for p in rows}
    finally:
        eng.close()


def test_engine_writes_the_configured_weights():
    flat = _scores(EngineConfig())
    assert set(flat) == {SHORT, LONG}
    assert flat[LONG] == pytest.approx(flat[SHORT])
    lucene = _scores(EngineConfig().with_overrides({"keyword.b": 0.75}))
    assert lucene[SHORT] > lucene[LONG]
