"""Embedding-model upgrade (seed 000: "version on every vector, filter by
version, re-embed job").

:func:`reembed` copies every record of the engine's store - every status,
archived ones too - into a *target* store with vectors of the new model and
``embedding_version`` = the new version, in batches with progress, and then
switches the engine to the target store and the new embedder:

* the live store is never modified while the job runs, so retrieval keeps
  serving the old version until the switch, and after it only the new one
  (every read filters on ``embedding_version``): versions never mix;
* the switch is one step: the engine's store and embedder are swapped, and for
  a persistent workspace ``<workspace>/active_embedding.json`` (written with an
  atomic rename) records the new backend, model, version and store location,
  which :func:`load_active_embedding` reads back at the next start;
* an interrupted run resumes: the target store persists (edge: shard
  ``<workspace>/qdrant-<version slug>``; client: collection
  ``<collection>__<version slug>``), and records already there with the new
  version and unchanged content keep their vectors (only their payload is
  refreshed).

The target has its own dense dimension, so models of different sizes work.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import EmbeddingSection
from ..embedding import CachedEmbedder
from ..errors import ReembedError, StoreError, ValidationError, os_reason
from ..observability.tracing import SPAN_CONSOLIDATE, set_attrs
from ..paths import ACTIVE_EMBEDDING_FILE, workspace_paths
from ..store.base import ScoredPayload, StoredPoint, StoreFilter, VectorStore
from ..write.records import payload_point

if TYPE_CHECKING:
    from ..ports import Host

__all__ = ["ACTIVE_FILE", "ReembedError", "ReembedReport", "load_active_embedding", "reembed", "target_store_for"]

#: file in the workspace naming the active embedding and its store
ACTIVE_FILE = ACTIVE_EMBEDDING_FILE



@dataclass(frozen=True)
class ReembedReport:
    """Outcome of :func:`reembed`: ``total`` records in scope, ``embedded`` with a
    fresh vector in this run, ``reused`` already in the target from an earlier
    (interrupted) run, ``batches`` processed, ``switched`` whether the engine now
    uses the new version, ``target`` the target store's location, ``seconds`` wall time."""

    source_version: str
    target_version: str
    total: int
    embedded: int
    reused: int
    batches: int
    switched: bool
    target: str
    seconds: float

    @property
    def done(self) -> int:
        return self.embedded + self.reused


def version_slug(version: str) -> str:
    """File/collection-safe form of an embedding version (``st:all-MiniLM-L6-v2:384`` -> ``st_all-minilm-l6-v2_384``)."""
    return re.sub(r"[^a-z0-9_-]+", "_", version.lower()).strip("_")


def target_store_for(eng: Host, version: str) -> tuple[VectorStore, str]:
    """The store a re-embed to ``version`` writes into, and its location string.

    Ephemeral engines get a temporary edge shard; persistent edge engines
    ``<workspace>/qdrant-<slug>``; client engines the collection
    ``<collection>__<slug>`` on the same server.
    """
    slug = version_slug(version)
    cfg = eng.config.storage
    if cfg.backend.strip().lower() == "client":
        from ..store.client import ClientStore

        src = eng.store
        url = getattr(src, "url", None) or cfg.url or os.environ.get("QDRANT_URL") or ":memory:"
        coll = f"{cfg.collection}__{slug}"
        return ClientStore(url=url, api_key=cfg.api_key or os.environ.get("QDRANT_API_KEY"), collection=coll), coll
    from ..store.edge import EdgeStore

    if getattr(eng, "ephemeral", False):
        st = EdgeStore(ephemeral=True)
        return st, str(st.path)
    path = workspace_paths(eng.config).reembed_shard(slug)
    return EdgeStore(path), str(path)


def load_active_embedding(workspace: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The record :func:`reembed` wrote at its last switch (keys ``backend``,
    ``model``, ``version``, ``storage_backend``, ``storage_path``, ``collection``,
    ``switched_at``), or None when the workspace never switched. Raises
    ReembedError for an unreadable file."""
    f = Path(workspace) / ACTIVE_FILE
    if not f.exists():
        return None
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ReembedError(f"unreadable {f}: {os_reason(e)}") from e
    if not isinstance(data, dict) or "version" not in data:
        raise ReembedError(f"{f} lacks 'version'")
    return data


def _write_active(workspace: Path, record: dict[str, Any]) -> None:
    workspace.mkdir(parents=True, exist_ok=True)
    tmp = workspace / (ACTIVE_FILE + ".tmp")
    tmp.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(tmp, workspace / ACTIVE_FILE)


def _source_rows(eng: Host, tenant_ids: Sequence[str]) -> list[ScoredPayload]:
    rows: list[ScoredPayload] = []
    for t in tenant_ids:
        rows.extend(eng.store.scroll(StoreFilter(tenant_id=t, user_id=None, statuses=None, include_archived=True,
                                                 tenant_scan=True)))
    return rows


def reembed(
    eng: Host,
    embedder: CachedEmbedder,
    *,
    embedding: EmbeddingSection | None = None,
    tenant_ids: Sequence[str] = ("default",),
    target: VectorStore | None = None,
    target_location: str | None = None,
    batch_size: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    max_batches: int | None = None,
    switch: bool = True,
) -> ReembedReport:
    """Re-embed every record of ``tenant_ids`` with ``embedder`` into the target store and switch.

    ``embedding``: the config section describing ``embedder`` (written into
    ``active_embedding.json`` and the engine's config); ``target``: the store to
    fill (default :func:`target_store_for`); ``batch_size``: texts per encode
    call (default ``embedding.batch_size``); ``progress(done, total)`` after
    each batch; ``max_batches`` stops early without switching (a chunked or
    interrupted run; call again to resume). Before switching, the job checks
    that the target holds every record of the source; when the source store can
    count all its points (edge), records of tenants outside ``tenant_ids`` make
    it refuse (ReembedError) rather than drop them. Emits one
    ``memory.consolidate`` span (``memory.lifecycle.job`` = ``reembed``).
    """
    started = time.perf_counter()
    src_version = eng.embedding_version
    new_version = embedder.version
    if new_version == src_version:
        raise ReembedError(f"the engine already uses {new_version}; nothing to re-embed")
    bs = batch_size or eng.config.embedding.batch_size
    if bs < 1:
        raise ValidationError("batch_size must be >= 1")
    location = target_location or ""
    if target is None:
        target, location = target_store_for(eng, new_version)
    target.ensure_collection(embedder.dim)
    with eng.tracing.tracer.start_as_current_span(SPAN_CONSOLIDATE) as span:
        rows = _source_rows(eng, tenant_ids)
        total = len(rows)
        embedded = reused = batches = done = 0
        for start in range(0, total, bs):
            if max_batches is not None and batches >= max_batches:
                break
            chunk = rows[start : start + bs]
            have = {p.id: p for p in target.retrieve([p.id for p in chunk], with_vectors=True)}
            points: list[StoredPoint] = []
            todo: list[ScoredPayload] = []
            for p in chunk:
                old = have.get(p.id)
                if (old is not None and old.dense is not None and old.payload.get("embedding_version") == new_version
                        and old.payload.get("content") == p.payload.get("content")):
                    points.append(payload_point(p.id, old.dense, {**p.payload, "embedding_version": new_version},
                                                eng.config.keyword))
                    reused += 1
                else:
                    todo.append(p)
            if todo:
                vecs = embedder.embed_documents([str(p.payload.get("content", "")) for p in todo])
                for p, v in zip(todo, vecs, strict=True):
                    points.append(payload_point(p.id, v, {**p.payload, "embedding_version": new_version},
                                                eng.config.keyword))
                embedded += len(todo)
            target.upsert(points)
            batches += 1
            done += len(chunk)
            if progress:
                progress(done, total)
        complete = done == total
        switched = False
        if switch and complete:
            _check_complete(eng, target, rows, tenant_ids)
            _switch(eng, target, embedder, embedding, location)
            switched = True
        set_attrs(span, {"memory.lifecycle.job": "reembed", "memory.embedding_version": new_version,
                         "memory.reembed.source_version": src_version, "memory.reembed.total": total,
                         "memory.reembed.embedded": embedded, "memory.reembed.reused": reused,
                         "memory.reembed.switched": switched})
    return ReembedReport(src_version, new_version, total, embedded, reused, batches, switched, location,
                         time.perf_counter() - started)


def _check_complete(eng: Host, target: VectorStore, rows: list[ScoredPayload], tenant_ids: Sequence[str]) -> None:
    total_fn = getattr(eng.store, "total_points", None)
    if callable(total_fn):
        n_all = int(total_fn())
        if n_all != len(rows):
            raise ReembedError(
                f"the store holds {n_all} records but tenants {list(tenant_ids)} have {len(rows)}: pass every "
                "tenant so no record is left behind by the switch")
    n_target = sum(target.count(StoreFilter(tenant_id=t, user_id=None, statuses=None, include_archived=True,
                                            tenant_scan=True)) for t in tenant_ids)
    if n_target < len(rows):
        raise ReembedError(f"target holds {n_target} of {len(rows)} records; not switching")


def _switch(eng: Host, target: VectorStore, embedder: CachedEmbedder, embedding: EmbeddingSection | None,
            location: str) -> None:
    old = eng.store
    # store first, then embedder: a retrieval caught in between filters on one version
    # and finds nothing rather than mixing two models' vectors
    eng.store = target
    eng.embedder = embedder
    if embedding is not None:
        eng.config = eng.config.with_overrides({"embedding.backend": embedding.backend,
                                                "embedding.model": embedding.model})
    if not getattr(eng, "ephemeral", False):
        _write_active(Path(eng.config.workspace), {
            "backend": embedding.backend if embedding else None, "model": embedding.model if embedding else None,
            "version": embedder.version, "storage_backend": eng.config.storage.backend,
            "storage_path": location if eng.config.storage.backend != "client" else None,
            "collection": location if eng.config.storage.backend == "client" else None,
            "switched_at": time.time(),
        })
    try:
        old.close()
    except StoreError:
        pass
