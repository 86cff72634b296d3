"""Fusion formulas, floor and token budget: pure functions (no I/O, no clock).

Three strategies, all selectable and tunable (SEED_DIGEST section 4):

* weighted (seed 000): ``w_s*sim + w_r*exp(-dt/tau) + w_i*importance`` with
  0.5 / 0.3 / 0.2 and tau = 7 days;
* five-term (seed 002): ``0.4*vector + 0.2*keyword_coverage + 0.1*metadata
  + 0.2*exp(-days*ln2/half_life) + 0.1*importance``, half-life by memory type
  (episodic 30 d, semantic 90 d, procedural/fact: no decay -> 1.0);
* hybrid (issue 16, chosen on dev data): ``w_d*sim + w_k*max(keyword, exact)
  + w_r*exp(-dt/tau) + w_i*importance`` with 0.6 / 0.4 / 0.05 / 0.05 and tau =
  180 days, ``keyword`` = BM25 / the best BM25 of the query (CombSUM of
  max-normalised scores, Fox & Shaw 1994; Lee 1997);
* RRF (seed 002/004; Cormack et al. 2009): ``sum_r w_r / (k + rank_r)`` with
  k = 60; k damps the advantage of first places so that agreement between
  routes matters more than a single top rank.

Time arithmetic uses seconds; ``now`` is always passed in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from ..errors import ConfigError

DAY = 86_400.0


@dataclass(frozen=True)
class Candidate:
    """Everything fusion needs about one memory.

    ``similarity``: rescaled dense similarity in [0, 1]; ``coverage``: query
    keyword coverage in [0, 1]; ``exact_match``: 1.0 when the fact route matched or a query identifier
    (order number, version, code) occurs in the memory;
    ``metadata_match`` in [0, 1]; ``age_seconds`` >= 0 since the memory was
    written/updated; ``half_life_days``: None = no decay; ``route_ranks``:
    1-based rank per route that returned it; ``source_weight`` multiplies the
    fused score (user-stated > model-inferred, seed 004); ``temporal_match``
    is 1.0 when the query names a date range ('last Friday') that the memory's
    event time falls in; ``keyword`` is the BM25 score divided by the best
    BM25 score of the query's keyword route, in [0, 1] (0 when the keyword route
    did not return it); ``context_relevance`` is the relevance a memory borrows
    from a conversational neighbour (see ``retrieve/context.py``); ``category_match`` is the
    relevance of a memory of the fact category the request was routed to (write/categories.py),
    counted like an exact match but never lent to conversational neighbours; ``speaker_match`` is
    1.0 when the query names the memory's own speaker (``metadata.speaker``, see ``retrieve/candidates.py``),
    0.0 otherwise; ``written_at`` (epoch seconds) and ``text`` only order equal scores
    (:func:`rank_key`).
    """

    memory_id: str
    similarity: float = 0.0
    coverage: float = 0.0
    #: the informative share of ``coverage`` in [0, 1]: the coverage with the query's words weighted by their
    #: general IDF over the plain one (retrieval.coverage_term_prior; 1 = off), read by :attr:`gate_relevance` only
    gate_share: float = 1.0
    #: the gate's dense similarity over ``similarity`` (>= 0): the cross-script baseline
    #: (embedding.cross_script_similarity_baseline) where the ranking keeps the general one; 1 = the same
    gate_similarity_share: float = 1.0
    #: the calibrated gate similarity over ``similarity`` (retrieval.gate_calibration, retrieve/calibration.py),
    #: read by :attr:`calibrated_gate_relevance` only when no candidate opens the gate on :attr:`gate_relevance`;
    #: None = off
    calibrated_similarity_share: float | None = None
    exact_match: float = 0.0
    metadata_match: float = 0.0
    importance: float = 0.5
    age_seconds: float = 0.0
    half_life_days: float | None = None
    route_ranks: Mapping[str, int] = field(default_factory=dict)
    route_scores: Mapping[str, float] = field(default_factory=dict)
    source_weight: float = 1.0
    tokens: int = 0
    temporal_match: float = 0.0
    keyword: float = 0.0
    context_relevance: float = 0.0
    #: what the floor's gate reads of ``context_relevance``: the share of the neighbour's gate relevance rather than
    #: of its relevance (retrieve/context.py), so that a neighbour's evidence the gate discounts (a function-like
    #: word, a participant's name) does not open the gate through the turn next to it; None = ``context_relevance``
    context_gate_relevance: float | None = None
    category_match: float = 0.0
    speaker_match: float = 0.0
    fused: float = 0.0
    #: False: the memory is about another relative than the one the question asks through a relation path
    #: (retrieve/relations.py); its conversational neighbours lend it no relevance (retrieve/context.py)
    borrows: bool = True
    #: the query is a statement of the user's present written mostly in Chinese (retrieve/candidates.py is_cjk,
    #: text.is_lookup false): the hybrid fusion may max-normalise its dense term (``dense_max``, :func:`fuse`)
    cjk_statement: bool = False
    #: when the memory was written (epoch seconds) and its text: the stable
    #: part of the order of equal scores (memory ids are random, see :func:`rank_key`)
    written_at: float = 0.0
    text: str = ""

    @property
    def relevance(self) -> float:
        """What the relevance floor is compared with, in [0, 1]: an exact
        fact/identifier match, else the noisy-OR of dense similarity, keyword
        coverage and category evidence, 1 - (1 - sim)(1 - coverage)(1 - category)
        (independent pieces of evidence that the memory is what the query needs: a
        weak category membership passes the floor only together with some similarity
        of its own, see ``intent.member_full``). Recency and importance play no part."""
        return max(self.exact_match, self.context_relevance,
                   1.0 - (1.0 - self.similarity) * (1.0 - self.coverage) * (1.0 - self.category_match))

    @property
    def gate_context(self) -> float:
        """The borrowed relevance the floor's gate reads: :attr:`context_gate_relevance`, else ``context_relevance``."""
        return self.context_relevance if self.context_gate_relevance is None else self.context_gate_relevance

    @property
    def gate_relevance(self) -> float:
        """:attr:`relevance` with the coverage x ``gate_share``: what the floor's gate (is the question on a stored
        topic at all?) compares with ``retrieval.floor``; a near miss that shares only a function-like word ('去')
        with a never-stored question does not open it; the similarity x ``gate_similarity_share`` (a question in one
        script for a memory in the other judged on the cross-script baseline). Equal to :attr:`relevance` with both 1."""
        sim = min(1.0, self.similarity * self.gate_similarity_share)
        return max(self.exact_match, self.gate_context,
                   1.0 - (1.0 - sim) * (1.0 - self.coverage * self.gate_share) * (1.0 - self.category_match))


    @property
    def calibrated_gate_relevance(self) -> float:
        """:attr:`gate_relevance` with the dense similarity calibrated on the query's own background (the larger of
        it and the fixed-baseline one; retrieval.gate_calibration); equal to :attr:`gate_relevance` when off."""
        if self.calibrated_similarity_share is None:
            return self.gate_relevance
        sim = min(1.0, self.similarity * max(self.gate_similarity_share, self.calibrated_similarity_share))
        return max(self.exact_match, self.gate_context,
                   1.0 - (1.0 - sim) * (1.0 - self.coverage * self.gate_share) * (1.0 - self.category_match))


def recency(age_seconds: float, tau_days: float) -> float:
    """exp(-dt / tau), dt and tau in days (seed 000). 1.0 at age 0, e^-1 at age tau."""
    if tau_days <= 0:
        raise ConfigError("tau_days must be > 0")
    return math.exp(-max(0.0, age_seconds) / (tau_days * DAY))


def half_life_weight(age_seconds: float, half_life_days: float | None) -> float:
    """exp(-ln2 * days / half_life): 0.5 after one half-life; 1.0 when half_life is None (no decay, seed 002)."""
    if half_life_days is None:
        return 1.0
    if half_life_days <= 0:
        raise ConfigError("half_life_days must be > 0 or None")
    return math.exp(-math.log(2) * max(0.0, age_seconds) / (half_life_days * DAY))


def weighted_score(c: Candidate, w_similarity: float, w_recency: float, w_importance: float, tau_days: float) -> float:
    """Seed 000: w_s*sim + w_r*recency + w_i*importance (defaults 0.5/0.3/0.2, tau 7 d).

    ``sim`` is the candidate's relevance (the best of dense similarity, keyword
    coverage and exact fact/identifier match): in a hybrid engine an exact order
    number is as strong a match as a close paraphrase."""
    return w_similarity * c.relevance + w_recency * recency(c.age_seconds, tau_days) + w_importance * c.importance


def five_term_score(
    c: Candidate, w_vector: float, w_keyword: float, w_metadata: float, w_time: float, w_importance: float
) -> float:
    """Seed 002: 0.4*vector + 0.2*keyword + 0.1*metadata + 0.2*time + 0.1*importance;
    the keyword term is max(coverage, exact fact/identifier match)."""
    return (
        w_vector * c.similarity
        + w_keyword * max(c.coverage, c.exact_match, c.category_match)
        + w_metadata * c.metadata_match
        + w_time * half_life_weight(c.age_seconds, c.half_life_days)
        + w_importance * c.importance
    )


def hybrid_score(
    c: Candidate, w_dense: float, w_keyword: float, w_recency: float, w_importance: float, tau_days: float,
    dense_max: float = 0.0,
) -> float:
    """w_d*sim + w_k*max(keyword, exact) + w_r*exp(-dt/tau) + w_i*importance.

    CombSUM of normalised scores (Fox & Shaw 1994): ``sim`` is the model-rescaled
    cosine, ``keyword`` BM25 over the query's best BM25 (both in [0, 1]); unlike
    RRF it keeps how far apart the scores are, unlike ``weighted`` the keyword
    evidence is IDF-weighted BM25, not flat coverage. ``dense_max`` > 0 (a Chinese query, see :func:`fuse`):
    the dense term is ``sim / dense_max`` capped at 1, max-normalised like the keyword term."""
    sim = min(1.0, c.similarity / dense_max) if dense_max > 0 and c.cjk_statement else c.similarity
    return (w_dense * sim + w_keyword * max(c.keyword, c.exact_match, c.category_match)
            + w_recency * recency(c.age_seconds, tau_days) + w_importance * c.importance)


def rrf_score(route_ranks: Mapping[str, int], k: float, route_weights: Mapping[str, float] | None = None) -> float:
    """sum over routes of w_r / (k + rank_r), rank 1-based (Cormack, Clarke & Buettcher 2009; k = 60)."""
    w = route_weights or {}
    return sum(w.get(r, 1.0) / (k + rank) for r, rank in route_ranks.items())


def rank_lists(route_lists: Mapping[str, Iterable[str]]) -> dict[str, dict[str, int]]:
    """{route: [ids best first]} -> {id: {route: 1-based rank}}."""
    out: dict[str, dict[str, int]] = {}
    for route, ids in route_lists.items():
        for i, mid in enumerate(ids, start=1):
            out.setdefault(mid, {}).setdefault(route, i)
    return out


def rank_key(c: Candidate) -> tuple[float, float, str, str]:
    """The order of a ranked list: fused score descending, then, among equal scores, the newer
    memory first (``written_at`` descending), then by text, and only last by memory id. Ids are
    random (``secrets.token_hex``), so ordering ties by id alone made the same code on the same
    data rank differently from run to run (LoCoMo dev 0.770 / 0.775 / 0.772, issue 16)."""
    return (-c.fused, -c.written_at, c.text, c.memory_id)


def fuse(candidates: Iterable[Candidate], strategy: str, params: Mapping[str, float]) -> list[Candidate]:
    """Score every candidate with the strategy and return new candidates
    (inputs untouched) in :func:`rank_key` order (fused score desc, ties newest first, then text).

    ``params`` keys: weighted -> similarity, recency, importance, tau_days;
    five_term -> vector, keyword, metadata, time, importance;
    hybrid -> dense, keyword, recency, importance, tau_days;
    rrf -> k and optional ``route.<name>`` weights; any strategy -> optional
    ``temporal``, added for a date match, and optional ``speaker``, added when the query
    names the memory's speaker.
    """
    cands = list(candidates)
    # a Chinese statement's dense term over its best similarity (params "dense_scale_cjk" = 1): e5 packs Chinese
    # pairs into a narrow band (rescaled 0-0.35), so unnormalised the dense term spans a third of what the
    # max-normalised keyword term does, and one shared word outweighs the best paraphrase
    dense_max = (max((c.similarity for c in cands if c.cjk_statement), default=0.0)
                 if strategy == "hybrid" and params.get("dense_scale_cjk", 0.0) else 0.0)
    out = []
    for c in cands:
        if strategy == "weighted":
            s = weighted_score(c, params["similarity"], params["recency"], params["importance"], params["tau_days"])
        elif strategy == "five_term":
            s = five_term_score(c, params["vector"], params["keyword"], params["metadata"], params["time"], params["importance"])
        elif strategy == "hybrid":
            s = hybrid_score(c, params["dense"], params["keyword"], params["recency"], params["importance"],
                             params["tau_days"], dense_max)
        elif strategy == "rrf":
            rw = {k.split(".", 1)[1]: v for k, v in params.items() if k.startswith("route.")}
            s = rrf_score(c.route_ranks, params["k"], rw)
        else:
            raise ConfigError(f"unknown fusion strategy {strategy!r}; valid: weighted, five_term, rrf, hybrid")
        s += params.get("temporal", 0.0) * c.temporal_match + params.get("speaker", 0.0) * c.speaker_match
        out.append(replace(c, fused=s * c.source_weight))
    out.sort(key=rank_key)
    return out


def apply_floor(ranked: list[Candidate], floor: float) -> tuple[list[Candidate], list[Candidate]]:
    """Split into (kept, dropped) by ``relevance >= floor`` (seed 002: 0.45; 0.3 let noise in)."""
    kept = [c for c in ranked if c.relevance >= floor]
    dropped = [c for c in ranked if c.relevance < floor]
    return kept, dropped


def apply_budget(ranked: list[Candidate], top_k: int, token_budget: int) -> tuple[list[Candidate], list[Candidate], list[Candidate]]:
    """Take at most ``top_k`` in order while the summed ``tokens`` stay within
    ``token_budget`` (seed 003: 1000..1500 tokens of memory). A memory that
    does not fit is skipped and smaller later ones may still fit.
    Returns (kept, dropped_by_top_k, dropped_by_budget)."""
    kept: list[Candidate] = []
    over_k: list[Candidate] = []
    over_budget: list[Candidate] = []
    used = 0
    for c in ranked:
        if len(kept) >= top_k:
            over_k.append(c)
        elif used + c.tokens > token_budget:
            over_budget.append(c)
        else:
            kept.append(c)
            used += c.tokens
    return kept, over_k, over_budget
