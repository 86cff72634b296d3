"""The last retrieval stages: the relevance floor (seed 002: 0.45; 0.3 let noise
in) and top-k within a token budget (seed 003: 1000..1500 tokens of memory), as
stages around the pure :func:`~memory_engine.retrieve.fusion.apply_floor` and
:func:`~memory_engine.retrieve.fusion.apply_budget`."""

from __future__ import annotations

from ..config import RetrievalSection
from ..errors import ConfigError
from .fusion import Candidate, apply_budget, apply_floor, rank_key

__all__ = ["Budget", "RelevanceFloor"]


class RelevanceFloor:
    """``split(ranked)`` -> (kept, dropped). Two levels: the query is answerable when at
    least one candidate reaches ``retrieval.floor``; then every candidate with relevance >=
    ``retrieval.candidate_floor`` is kept (None = the same floor), else nothing is. The gate
    keeps never-stored topics empty (it reads ``gate_relevance``: with ``retrieval.coverage_term_prior`` the
    coverage of the query's informative words) while the lower candidate floor keeps the weaker
    evidence of an answerable question (a dialogue's answer turns share few words with it).
    On an answerable question the ``retrieval.dense_keep`` candidates of highest (calibrated)
    dense similarity pass as well, at most ``retrieval.dense_keep_share`` of the candidates: the
    dense rank among many is the evidence of a paraphrase. With ``retrieval.gate_calibration``, when no candidate
    opens the gate, one whose ``calibrated_gate_relevance`` reaches the floor opens it and is kept
    (retrieve/calibration.py); an open gate is left as it is. Both lists keep the order of ``ranked``."""

    def __init__(self, rcfg: RetrievalSection) -> None:
        cand = rcfg.candidate_floor
        if not 0.0 <= rcfg.floor <= 1.0 or (cand is not None and not 0.0 <= cand <= 1.0):
            raise ConfigError("retrieval.floor and candidate_floor must be in [0, 1]", key="retrieval.floor")
        if rcfg.dense_keep < 0:
            raise ConfigError("retrieval.dense_keep must be >= 0", key="retrieval.dense_keep")
        self.floor = rcfg.floor
        self.candidate_floor = rcfg.floor if cand is None else min(cand, rcfg.floor)
        # the field whose value the candidate floor is: an explanation names the one a user would change
        self.candidate_floor_key = ("retrieval.candidate_floor" if cand is not None and cand < rcfg.floor
                                    else "retrieval.floor")
        self.dense_keep = rcfg.dense_keep
        if not 0.0 <= rcfg.dense_keep_share <= 1.0:
            raise ConfigError("retrieval.dense_keep_share must be in [0, 1]", key="retrieval.dense_keep_share")
        self.dense_keep_share = rcfg.dense_keep_share
        if not 0.0 <= rcfg.statement_min_similarity <= 1.0:
            raise ConfigError("retrieval.statement_min_similarity must be in [0, 1]",
                              key="retrieval.statement_min_similarity")
        self.statement_keep = rcfg.statement_dense_keep
        self.statement_min_similarity = rcfg.statement_min_similarity
        if not 0.0 <= rcfg.statement_keep_share <= 1.0 or rcfg.statement_keep < 0:
            raise ConfigError("retrieval.statement_keep must be >= 0 and statement_keep_share in [0, 1]",
                              key="retrieval.statement_keep")
        # a statement's lift: (count, share); 0 = the lookup's dense_keep and dense_keep_share
        self.statement_lift = ((rcfg.statement_keep, rcfg.statement_keep_share) if rcfg.statement_keep
                               else (rcfg.dense_keep, rcfg.dense_keep_share))

    def split(self, ranked: list[Candidate], lookup: bool = True) -> tuple[list[Candidate], list[Candidate]]:
        """``lookup``: the query looks something up (a question or a short phrase, text.is_lookup). For a
        statement of the user's present (``lookup`` False) with ``retrieval.statement_dense_keep``, the dense
        lift applies also when no candidate reaches the floor, to candidates whose calibrated similarity is at
        least ``retrieval.statement_min_similarity``: a statement asks for no fact that may be missing, it calls
        for the experience it relates to, whose only evidence is often its dense rank (MADial-like recall). A
        statement's lift takes ``retrieval.statement_keep`` / ``statement_keep_share`` (0 = the lookup's
        ``dense_keep`` / ``dense_keep_share``), also on top of the floor when a candidate reaches it."""
        statement = not lookup and self.statement_keep and self.statement_lift[0] > 0
        # the gate reads gate_relevance: the coverage of the query's informative words (coverage_term_prior)
        openers: set[str] = set()
        if not any(c.gate_relevance >= self.floor for c in ranked):
            # the dense similarity calibrated on the query's own background (retrieval.gate_calibration) may open
            # it: the candidates that do are kept, on that evidence, whatever their fixed-baseline relevance
            openers = {c.memory_id for c in ranked if c.calibrated_gate_relevance >= self.floor}
        if not self.gate_open(ranked):
            if not statement:
                return [], list(ranked)  # a never-stored topic stays empty
            lift = self._lift(ranked, self.statement_min_similarity, *self.statement_lift)
            return ([c for c in ranked if c.memory_id in lift], [c for c in ranked if c.memory_id not in lift])
        kept, below = apply_floor(ranked, min(self.candidate_floor, self.floor))
        if openers:
            kept = [c for c in ranked if c.relevance >= self.candidate_floor or c.memory_id in openers]
            below = [c for c in below if c.memory_id not in openers]
        if not (self.dense_keep or statement) or not below:
            return kept, below
        lift = self._lift(ranked, 0.0, self.dense_keep, self.dense_keep_share)
        if statement:  # the statement's nearest experiences pass too (statement_keep)
            lift |= self._lift(ranked, self.statement_min_similarity, *self.statement_lift)
        left = {c.memory_id for c in below if c.memory_id not in lift}
        return [c for c in ranked if c.memory_id not in left], [c for c in below if c.memory_id in left]

    def gate_open(self, ranked: list[Candidate]) -> bool:
        """The gate of :meth:`split`: True when the query is on a stored topic, i.e. a candidate's
        ``gate_relevance`` or (``retrieval.gate_calibration``) ``calibrated_gate_relevance`` reaches
        ``retrieval.floor``; False drops every candidate (but a statement's lift)."""
        return any(c.gate_relevance >= self.floor or c.calibrated_gate_relevance >= self.floor for c in ranked)

    def check(self, c: Candidate, gate_open: bool) -> tuple[str, float, float, str]:
        """Which check of :meth:`split` a dropped candidate missed and its numbers, ``(check, value, threshold,
        key)``: ``("gate", its calibrated gate relevance, retrieval.floor, "retrieval.floor")`` when the gate was
        closed (``gate_open`` False, :meth:`gate_open` of the same ranked list), else ``("candidate_floor", its
        relevance, the candidate floor, key)`` where ``key`` is the config field that set it
        (``retrieval.candidate_floor`` when set below the floor, else ``retrieval.floor``). Values in [0, 1],
        rounded to 6 places."""
        if not gate_open:
            return "gate", round(c.calibrated_gate_relevance, 6), self.floor, "retrieval.floor"
        return "candidate_floor", round(c.relevance, 6), self.candidate_floor, self.candidate_floor_key

    @staticmethod
    def _lift(ranked: list[Candidate], min_similarity: float, keep: int, share: float) -> set[str]:
        """Ids of the ``keep`` candidates of highest calibrated similarity (above ``min_similarity``,
        and above 0: at or under the model's unrelated baseline is no dense evidence at all), at most
        ``share`` of the candidates: rank r of n is evidence when an unrelated memory would land
        there rarely (chance r/n)."""
        by_dense = sorted((c for c in ranked if c.similarity > 0 and c.similarity >= min_similarity),
                          key=lambda c: (-c.similarity, rank_key(c)))
        return {c.memory_id for c in by_dense[: min(keep, int(share * len(ranked)))]}


class Budget:
    """``take(ranked, top_k)`` -> (kept, over_k, over_budget): at most ``top_k`` (default
    ``retrieval.top_k``) in order within ``retrieval.token_budget`` tokens."""

    def __init__(self, rcfg: RetrievalSection) -> None:
        if rcfg.top_k < 1:
            raise ConfigError("retrieval.top_k must be >= 1", key="retrieval.top_k")
        if rcfg.token_budget < 0:
            raise ConfigError("retrieval.token_budget must be >= 0", key="retrieval.token_budget")
        self.top_k, self.token_budget = rcfg.top_k, rcfg.token_budget

    def take(self, ranked: list[Candidate], top_k: int | None = None
             ) -> tuple[list[Candidate], list[Candidate], list[Candidate]]:
        return apply_budget(ranked, self.top_k if top_k is None else top_k, self.token_budget)
