"""Per-query calibration of dense similarity for the floor's gate (``retrieval.gate_calibration``).

A fixed cosine baseline per model (embedding.similarity_baseline: e5 0.78) ignores that queries differ in how near
they sit to unrelated sentences: over the dev queries, e5's mean cosine to the English background below ranges from
0.69 to 0.78 (sd about 0.02 each), so 'Where do I work?' and its answer at cosine 0.80 rescale to 0.10, under the
floor, though the answer stands 2.8 of the query's standard deviations above an unrelated sentence. The gate's
question is "how unlikely is this similarity for a memory unrelated to the query"; this module answers it against a
fixed background of neutral everyday sentences (``background.toml``, English and Chinese, embedded once per
embedder version as stored memories are): the query's cosines to the background sentences of the memory's script
stand for its cosines to unrelated memories, and a candidate's ``z = (cos - mean) / sd`` over them is the number of
the query's own standard deviations the candidate stands above them (the local scaling of CSLS, Lample et al. 2018,
with the spread as the unit), meant to read the same for every embedder. Its limit: a memory on the question's topic
that does not answer it (the cat for a question about the dog) stands as high as an answer, so z_floor sits above
such near misses and only the clearest answers gain.

With ``retrieval.gate_calibration_memory_side`` the z is the mean of that query-side z and the memory-side one: the
cosine over the memory's own cosines to the background sentences read as queries (CSLS corrects both sides' hubness).

Shapes: the background is two matrices (n_en, dim) and (n_zh, dim) per side; :meth:`DenseBackground.of` gives a
:class:`QueryBackground` (mean and sd per script) for one query vector of shape (dim,).
"""

from __future__ import annotations

import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..embedding import CachedEmbedder

__all__ = ["DenseBackground", "QueryBackground", "background_sentences", "gate_similarity"]

_FILE = Path(__file__).with_name("background.toml")
_LOCK = threading.Lock()
#: (embedder version, kind) -> (English matrix, Chinese matrix), kind "d" (as memories) or "q" (as queries): the
#: background is embedded once per process and model
_VECTORS: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}


def background_sentences() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(English, Chinese) background sentences shipped with the package (``background.toml``)."""
    with _FILE.open("rb") as f:
        data = tomllib.load(f)
    return tuple(data["en"]), tuple(data["zh"])


@dataclass(frozen=True)
class QueryBackground:
    """One query's cosine to the background: mean and standard deviation over the English (``latin``) and the
    Chinese (``cjk``) sentences; ``sd`` > 0."""

    latin_mean: float
    latin_sd: float
    cjk_mean: float
    cjk_sd: float

    def z(self, cos: float, cjk_memory: bool) -> float:
        """The candidate's cosine in the query's background standard deviations above its background mean, for
        the background in the memory's script (a Chinese memory against the Chinese sentences)."""
        if cjk_memory:
            return (cos - self.cjk_mean) / self.cjk_sd
        return (cos - self.latin_mean) / self.latin_sd


class DenseBackground:
    """The background of one embedder: ``of(qvec)`` -> :class:`QueryBackground` (the sentences embedded as
    documents, the way memories are); ``memory_side(mvecs, cjk_query)`` -> the memories' own (mean, sd) over the
    sentences embedded as queries (the other side of CSLS: a memory near every query, a hub, stands less out).
    Each embedding is made once per embedder version and process."""

    def __init__(self, embedder: CachedEmbedder) -> None:
        self.embedder = embedder

    def vectors(self, kind: str = "d") -> tuple[np.ndarray, np.ndarray]:
        """(English, Chinese) matrices of shape (n, dim); ``kind`` "d" as documents, "q" as queries."""
        key = (self.embedder.version, kind)
        with _LOCK:
            got = _VECTORS.get(key)
            if got is None:
                embed = self.embedder.embed_documents if kind == "d" else self.embedder.embed_queries
                en, zh = background_sentences()
                got = (np.asarray(embed(en), dtype=np.float32), np.asarray(embed(zh), dtype=np.float32))
                _VECTORS[key] = got
            return got

    def memory_side(self, mvecs: np.ndarray, cjk_query: bool) -> tuple[np.ndarray, np.ndarray]:
        """Mean and sd (each shape (n,)) of the cosines of ``mvecs`` (shape (n, dim)) to the background sentences
        embedded as queries, in the query's script: where an unrelated query would sit for each memory."""
        en, zh = self.vectors("q")
        c = np.asarray(mvecs, dtype=np.float32) @ (zh if cjk_query else en).T
        return c.mean(axis=1), np.maximum(c.std(axis=1), 1e-6)

    def of(self, qvec: np.ndarray) -> QueryBackground:
        en, zh = self.vectors()
        q = np.asarray(qvec, dtype=np.float32)
        ce, cz = en @ q, zh @ q
        return QueryBackground(float(ce.mean()), max(float(ce.std()), 1e-6),
                               float(cz.mean()), max(float(cz.std()), 1e-6))


def gate_similarity(z: float, z_zero: float, z_floor: float, floor: float) -> float:
    """The gate's dense evidence in [0, 1] from a background z: 0 at ``z_zero`` (a candidate no further above the
    background than that is no evidence), ``floor`` at ``z_floor`` (the gate opens on dense evidence alone), linear
    between and beyond, capped at 1. Requires z_floor > z_zero."""
    return float(min(1.0, max(0.0, floor * (z - z_zero) / (z_floor - z_zero))))
