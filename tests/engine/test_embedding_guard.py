"""The embedding cache never keeps a wrong-dimension or non-finite vector, and a NaN query vector gives a
degraded retrieval (issue 15: one wrong-dimension answer made the same text fail forever; NaN vectors were
cached and stored; a NaN query gave 0 hits with no degraded flag)."""

from __future__ import annotations

import numpy as np
import pytest

from memory_engine.embedding import CachedEmbedder
from memory_engine.errors import EmbeddingError

pytestmark = pytest.mark.integration


class _Faulty:
    """The real model, answering badly for the next ``bad`` calls (``how``: 'dim' or 'nan') - a model server
    that hiccups, not a stand-in for our code."""

    def __init__(self, real, how: str, bad: int = 1) -> None:
        self.real, self.how, self.bad = real, how, bad
        self.version, self.dim = real.version, real.dim

    def _spoil(self, m: np.ndarray) -> np.ndarray:
        if self.bad <= 0:
            return m
        self.bad -= 1
        if self.how == "dim":
            return m[..., : self.dim // 2]
        out = m.copy()
        out[..., 0] = np.nan
        return out

    def embed_documents(self, texts):
        return self._spoil(self.real.embed_documents(texts))

    def embed_query(self, text):
        return self._spoil(self.real.embed_query(text))


@pytest.mark.parametrize("how", ["dim", "nan"])
def test_bad_vectors_are_refused_and_never_cached(embedder, how):
    cache = CachedEmbedder(_Faulty(embedder.inner, how, bad=2))
    with pytest.raises(EmbeddingError, match="shape|non-finite"):
        cache.embed_query("my favourite tea is oolong")
    with pytest.raises(EmbeddingError, match="shape|non-finite"):
        cache.embed_documents(["my favourite tea is oolong", "I live in Hangzhou"])
    v = cache.embed_query("my favourite tea is oolong")  # the model recovered: the text is not stuck
    assert v.shape == (embedder.dim,) and np.isfinite(v).all()
    m = cache.embed_documents(["my favourite tea is oolong", "I live in Hangzhou"])
    assert m.shape == (2, embedder.dim) and np.isfinite(m).all()
    assert cache.evict(["my favourite tea is oolong"]) == 2


def test_nan_query_vector_gives_a_degraded_result(make_engine, embedder):
    eng = make_engine()
    eng.add("I always order oat milk lattes", user_id="u")
    eng.embedder = CachedEmbedder(_Faulty(embedder.inner, "nan", bad=10))
    res = eng.retrieve("what milk do I like", user_id="u")
    assert res.degraded and res.hits == [] and "non-finite" in (res.error or "")
