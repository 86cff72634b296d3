"""The retrieval stages one by one: fusion classes against the pure formulas,
floor and budget, the route registry, candidate assembly, and their
configuration checks at construction."""

from __future__ import annotations

import pytest

from memory_engine.config import FusionStrategy, RetrievalSection, WriteSection
from memory_engine.errors import ConfigError
from memory_engine.retrieve.admission import Admission
from memory_engine.retrieve.candidates import CandidateBuilder, pool_routes
from memory_engine.retrieve.cutoffs import Budget, RelevanceFloor
from memory_engine.retrieve.fusers import FUSERS, FiveTermFusion, RRFFusion, WeightedFusion, fuser_for
from memory_engine.retrieve.fusion import Candidate, fuse, rrf_score
from memory_engine.retrieve.hop import EntityHop
from memory_engine.retrieve.query import VAGUE, VagueRewriter
from memory_engine.retrieve.routes import DEFAULT_ROUTES, ROUTES, KeywordRoute, build_routes
from memory_engine.scope import Scope
from memory_engine.store.base import ScoredPayload

CANDS = [
    Candidate("a", similarity=0.9, coverage=0.5, importance=0.4, age_seconds=3600, route_ranks={"vector": 1}),
    Candidate("b", similarity=0.5, coverage=1.0, importance=0.9, age_seconds=86400 * 3,
              route_ranks={"vector": 2, "keyword": 1}, temporal_match=1.0),
    Candidate("c", similarity=0.2, coverage=0.0, importance=0.5, route_ranks={"recent": 1}, source_weight=0.85),
]


def test_every_strategy_has_one_class_and_dispatch_follows_the_enum():
    assert set(FUSERS) == set(FusionStrategy)
    for strategy, cls in FUSERS.items():
        assert isinstance(fuser_for(RetrievalSection(fusion=strategy)), cls)


@pytest.mark.parametrize("cls", [WeightedFusion, FiveTermFusion, RRFFusion])
def test_fuser_equals_the_pure_formula(cls):
    rcfg = RetrievalSection(temporal_weight=0.1)
    fuser = cls(rcfg)
    assert fuser(CANDS) == fuse(CANDS, fuser.strategy.value, fuser.params)


def test_rrf_fuser_parameters():
    rcfg = RetrievalSection(fusion=FusionStrategy.RRF, rrf_k=10.0, temporal_weight=0.5)
    f = RRFFusion(rcfg)
    assert f.params["k"] == 10.0 and f.params["temporal"] == pytest.approx(0.05)
    top = f(CANDS)[0]
    assert top.memory_id == "b"
    assert top.fused == pytest.approx(rrf_score({"vector": 2, "keyword": 1}, 10.0, {"vector": 1.0, "keyword": 1.0})
                                      + 0.05)


def test_fuser_rejects_negative_weights():
    bad = RetrievalSection.model_construct(**{**RetrievalSection().__dict__, "temporal_weight": -1.0})
    with pytest.raises(ConfigError):
        WeightedFusion(bad)


def test_floor_and_budget():
    ranked = fuse(CANDS, "weighted", WeightedFusion(RetrievalSection()).params)
    kept, dropped = RelevanceFloor(RetrievalSection(floor=0.6)).split(ranked)
    assert {c.memory_id for c in kept} == {"a", "b"} and [c.memory_id for c in dropped] == ["c"]
    sized = [Candidate(str(i), tokens=10) for i in range(5)]
    got, over_k, over_budget = Budget(RetrievalSection(top_k=3, token_budget=25)).take(sized)
    assert [c.memory_id for c in got] == ["0", "1"] and len(over_budget) == 3 and over_k == []
    assert len(Budget(RetrievalSection(top_k=3, token_budget=100)).take(sized, top_k=4)[0]) == 4
    with pytest.raises(ConfigError):
        RelevanceFloor(RetrievalSection.model_construct(floor=1.5))
    with pytest.raises(ConfigError):
        Budget(RetrievalSection.model_construct(top_k=0, token_budget=10))


def test_route_registry():
    assert set(DEFAULT_ROUTES) == set(ROUTES) == {"dense", "keyword", "recent", "fact", "constraint", "fact_meaning",
                                                  "intent", "date"}
    routes = build_routes(None, RetrievalSection())  # type: ignore[arg-type]
    assert [r.name for r in routes] == list(DEFAULT_ROUTES)
    assert {r.name: r.channel for r in routes}["constraint"] == "fact"
    with pytest.raises(ConfigError, match="unknown retrieval routes"):
        build_routes(None, RetrievalSection(), ["dense", "graph"])  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        KeywordRoute(None, RetrievalSection.model_construct(keyword_min_coverage=2.0, route_limit=5))  # type: ignore[arg-type]


def test_pool_skips_other_owners_and_keeps_channel_ranks():
    scope = Scope("t", "u", "v")
    mine = {"tenant_id": "t", "user_id": "u"}
    pool = pool_routes({
        "vector": [ScoredPayload("m1", 0.9, mine), ScoredPayload("x", 0.8, {"tenant_id": "t", "user_id": "other"})],
        "fact": [ScoredPayload("m2", 1.0, mine), ScoredPayload("m1", 1.0, mine)],
    }, Admission(scope))
    assert list(pool.payloads) == ["m1", "m2"]
    assert pool.ranks["m1"] == {"vector": 1, "fact": 2} and pool.fact_ids >= {"m1", "m2"}


_MINE = {"tenant_id": "t", "user_id": "u"}
_CONFIRMED = {"_confirmed_by_user": {"text": "ok", "at": 1.0}}


@pytest.mark.parametrize(("payload", "exclude_flagged", "user_only", "admitted"), [
    (_MINE, True, True, True),
    ({"tenant_id": "t", "user_id": "other"}, False, False, False),  # another owner: never
    ({"tenant_id": "x", "user_id": "u"}, False, False, False),
    ({**_MINE, "flagged": True}, True, False, False),  # a planted instruction stays out ...
    ({**_MINE, "flagged": True}, False, False, True),  # ... only when retrieval.exclude_flagged is on
    ({**_MINE, "role": "assistant"}, False, True, False),  # the assistant's word on the user
    ({**_MINE, "role": "assistant"}, False, False, True),
    ({**_MINE, "role": "assistant", "metadata": _CONFIRMED}, False, True, True),  # confirmed: the user's
])
def test_admission_is_one_check_for_every_route(payload, exclude_flagged, user_only, admitted):
    admit = Admission(Scope("t", "u", "v"), exclude_flagged, user_only)
    row = ScoredPayload("m", 0.5, payload)
    assert admit.admits(row) is admitted
    # the routes' pool applies exactly this check (the context and hop stages call the same method)
    assert ("m" in pool_routes({"vector": [row]}, admit).payloads) is admitted


def test_stage_config_checks():
    with pytest.raises(ConfigError):
        CandidateBuilder(None, None, RetrievalSection.model_construct(  # type: ignore[arg-type]
            identifier_mismatch=1.5, inferred_weight=0.5, user_stated_weight=1.0), WriteSection())
    with pytest.raises(ConfigError):
        EntityHop(None, None, RetrievalSection.model_construct(hop_discount=2.0, hop_limit=1, hop_parents=1))  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        VagueRewriter(None, RetrievalSection.model_construct(  # type: ignore[arg-type]
            rewrite_terms=-1, rewrite_memories=1, rewrite_max_terms=1))


@pytest.mark.parametrize(("q", "vague"), [("上次那个", True), ("that one again", True), ("green tea", False)])
def test_vague_pattern(q, vague):
    assert bool(VAGUE.search(q)) is vague


def test_equal_similarity_scores_share_a_rank_and_other_channels_keep_their_order():
    # the store returns exact BM25 ties in an order of its own (random ids): rank-based fusion must not depend on it
    mine = {"tenant_id": "t", "user_id": "u"}
    rows = {"keyword": [ScoredPayload("a", 2.5, mine), ScoredPayload("b", 2.5, mine), ScoredPayload("c", 1.0, mine)],
            "recent": [ScoredPayload("b", 0.0, mine), ScoredPayload("c", 0.0, mine)]}
    pool = pool_routes(rows, Admission(Scope("t", "u", "v")))
    assert [pool.ranks[m]["keyword"] for m in "abc"] == [1, 1, 3]
    swapped = pool_routes({**rows, "keyword": [rows["keyword"][1], rows["keyword"][0], rows["keyword"][2]]},
                          Admission(Scope("t", "u", "v")))
    assert swapped.ranks["a"]["keyword"] == swapped.ranks["b"]["keyword"] == 1
    assert pool.ranks["b"]["recent"] == 1 and pool.ranks["c"]["recent"] == 2  # ordered by time, not scored
