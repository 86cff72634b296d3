"""Embedders: the real bundled models, the shared (version, text) cache, baselines."""

import numpy as np
import pytest

from memory_engine import EngineConfig
from memory_engine.embedding import make_embedder, rescale_similarity

pytestmark = pytest.mark.integration


def test_rescale_similarity():
    assert rescale_similarity(0.78, 0.78) == 0.0
    assert rescale_similarity(0.89, 0.78) == pytest.approx(0.5)
    assert rescale_similarity(1.0, 0.78) == 1.0 and rescale_similarity(0.1, 0.78) == 0.0


def test_shared_cache_embeds_each_text_once_and_baselines_are_per_config(embedder):
    other = make_embedder(EngineConfig().with_overrides({"embedding.similarity_baseline": 0.5}).embedding)
    assert other._cache is embedder._cache and other.baseline == 0.5 and embedder.baseline == 0.78
    text = "我喜欢靠窗的座位 unique-text-4711"
    misses = embedder.misses
    v1 = embedder.embed_documents([text, text])
    v2 = other.embed_documents([text])
    assert embedder.misses == misses + 1  # one model call for one distinct text across both views
    assert np.allclose(v1[0], v2[0]) and v1.shape == (2, 384)
    assert np.linalg.norm(embedder.embed_query("靠窗座位")) == pytest.approx(1.0, abs=1e-5)


def test_e5_reads_chinese_better_than_minilm(embedder):
    """Why e5 is the default (README 'Choosing the embedder'): a Chinese paraphrase must
    beat an unrelated Chinese sentence by a clear margin."""
    q, para, other = "我平时喝什么咖啡", "我每天早上喝一杯美式咖啡", "我的孩子今年上三年级"
    d = embedder.embed_documents([para, other])
    s = d @ embedder.embed_query(q)
    assert s[0] - s[1] > 0.05


def test_embed_queries_batches_the_misses_and_gives_embed_query_vectors(embedder):
    """The demo warms the query cache in batches: same vectors as one call per text, one model call for
    the misses, and later embed_query calls are cache hits."""
    from memory_engine.embedding import CachedEmbedder

    texts = ["我平时喝什么咖啡 q-4712", "where do I live q-4712", "我平时喝什么咖啡 q-4712"]
    fresh = CachedEmbedder(embedder.inner)  # own cache, same model
    one_by_one = np.stack([fresh.embed_query(t) for t in texts])
    misses = embedder.misses
    batch = embedder.embed_queries(texts)
    assert batch.shape == (3, 384) and embedder.misses == misses + 2
    assert np.allclose(batch, one_by_one, atol=1e-5)
    hits = embedder.hits
    embedder.embed_query(texts[1])
    assert embedder.hits == hits + 1 and embedder.misses == misses + 2
    assert embedder.embed_queries([]).shape == (0, 384)


def test_embed_queries_falls_back_to_one_call_per_text(embedder):
    """An embedder without embed_queries (the Embedder protocol does not require it) still works."""
    from memory_engine.embedding import CachedEmbedder

    class OneByOne:
        version, dim = embedder.inner.version, embedder.inner.dim
        embed_documents = embedder.inner.embed_documents
        embed_query = embedder.inner.embed_query

    got = CachedEmbedder(OneByOne()).embed_queries(["靠窗座位 q-4713", "aisle seat q-4713"])
    assert got.shape == (2, 384) and np.allclose(got[0], embedder.embed_query("靠窗座位 q-4713"), atol=1e-5)
