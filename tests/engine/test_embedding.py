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
