"""Fusion strategies as stages: one class per :class:`FusionStrategy`, built from
the ``retrieval`` section, each scoring with the pure formulas of
:mod:`memory_engine.retrieve.fusion` (weighted: seed 000; five-term: seed 002;
RRF: seed 002/004, Cormack et al. 2009). :func:`fuser_for` dispatches on the enum."""

from __future__ import annotations

from collections.abc import Iterable

from ..config import FusionStrategy, RetrievalSection
from ..errors import ConfigError
from .fusion import Candidate, fuse

__all__ = ["FUSERS", "FiveTermFusion", "Fuser", "HybridFusion", "RRFFusion", "WeightedFusion", "fuser_for"]


class Fuser:
    """Base: ``params`` (the :func:`fuse` parameters) fixed at construction; calling the
    fuser scores and sorts candidates (fused score desc, ties by :func:`~memory_engine.retrieve.fusion.rank_key`)."""

    strategy: FusionStrategy

    def __init__(self, rcfg: RetrievalSection) -> None:
        if rcfg.temporal_weight < 0:
            raise ConfigError("retrieval.temporal_weight must be >= 0", key="retrieval.temporal_weight")
        self.params = self._params(rcfg)
        # a memory said by the person the query names (retrieve/candidates.py): same scale as the date bonus
        self.params["speaker"] = rcfg.speaker_weight / (rcfg.rrf_k if self.strategy == FusionStrategy.RRF else 1.0)
        negative = [k for k, v in self.params.items() if v < 0]
        if negative:
            raise ConfigError(f"negative fusion parameters {negative}", key=f"retrieval.{negative[0]}")

    def _params(self, rcfg: RetrievalSection) -> dict[str, float]:
        raise NotImplementedError

    def __call__(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        return fuse(candidates, self.strategy.value, self.params)


class WeightedFusion(Fuser):
    """``w_s*sim + w_r*exp(-dt/tau) + w_i*importance`` (+ temporal bonus)."""

    strategy = FusionStrategy.WEIGHTED

    def _params(self, r: RetrievalSection) -> dict[str, float]:
        return {"similarity": r.weights.similarity, "recency": r.weights.recency,
                "importance": r.weights.importance, "tau_days": r.tau_days, "temporal": r.temporal_weight}


class FiveTermFusion(Fuser):
    """``0.4*vector + 0.2*keyword + 0.1*metadata + 0.2*time + 0.1*importance`` (+ temporal bonus)."""

    strategy = FusionStrategy.FIVE_TERM

    def _params(self, r: RetrievalSection) -> dict[str, float]:
        w = r.five_term_weights
        return {"vector": w.vector, "keyword": w.keyword, "metadata": w.metadata, "time": w.time,
                "importance": w.importance, "temporal": r.temporal_weight}


class RRFFusion(Fuser):
    """``sum_r w_r / (k + rank_r)``; the date and speaker bonuses are scaled to that range (``/ k``)."""

    strategy = FusionStrategy.RRF

    def _params(self, r: RetrievalSection) -> dict[str, float]:
        if r.rrf_k <= 0:
            raise ConfigError("retrieval.rrf_k must be > 0", key="retrieval.rrf_k")
        rw = r.route_weights
        return {"k": r.rrf_k, "route.vector": rw.vector, "route.keyword": rw.keyword, "route.recent": rw.recent,
                "route.fact": rw.fact, "temporal": r.temporal_weight / r.rrf_k}


class HybridFusion(Fuser):
    """``w_d*sim + w_k*max(keyword, exact) + w_r*exp(-dt/tau) + w_i*importance`` (+ temporal bonus)."""

    strategy = FusionStrategy.HYBRID

    def _params(self, r: RetrievalSection) -> dict[str, float]:
        w = r.hybrid_weights
        return {"dense": w.dense, "keyword": w.keyword, "recency": w.recency, "importance": w.importance,
                "tau_days": w.tau_days, "temporal": r.temporal_weight, "dense_scale_cjk": float(r.dense_scale_cjk)}


FUSERS: dict[FusionStrategy, type[Fuser]] = {
    FusionStrategy.WEIGHTED: WeightedFusion, FusionStrategy.FIVE_TERM: FiveTermFusion, FusionStrategy.RRF: RRFFusion,
    FusionStrategy.HYBRID: HybridFusion,
}


def fuser_for(rcfg: RetrievalSection) -> Fuser:
    """The fuser of ``retrieval.fusion``."""
    return FUSERS[FusionStrategy(rcfg.fusion)](rcfg)
