"""Engine-level congruence of the two store backends: one golden suite replayed through the whole
engine (write pipeline, hybrid retrieval, fusion, floor, budget) on the qdrant-edge shard and on
qdrant-client's local mode (`:memory:`) gives the same rankings, scores and verdicts.

The store contract (memory_engine.testing.store_contract) and tests/store/test_store_congruence.py
check the store calls one by one; this checks that nothing above them depends on the backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_engine import EngineConfig
from memory_engine.evaluation.runner import default_engine_factory, run_suites
from memory_engine.evaluation.suite import load_suite

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SUITES = Path(__file__).resolve().parents[2] / "eval_sets"
#: corrections, identifiers, tenant isolation: every route (dense, keyword, fact, recent) and filter at work
SUITE_FILES = ("seed_golden.yaml", "user_isolation.yaml", "conflict_update.yaml", "exact_identifiers.yaml")


def _rankings(backend: str) -> dict[tuple[str, str], tuple[bool, list[tuple[tuple[str, ...], float]]]]:
    cfg = EngineConfig().with_overrides({"storage.backend": backend, "tracing.enabled": False})
    names: set[str] = set()

    def factory(c: EngineConfig):  # noqa: ANN202 - the runner's own factory, recording the backend used
        eng = default_engine_factory(c)
        names.add(eng.store.name)
        return eng

    run = run_suites([load_suite(SUITES / f) for f in SUITE_FILES], cfg, explain=False, engine_factory=factory)
    assert names == {backend}
    # memory ids are random per write: compare the suites' labels at each rank, and the fused scores
    return {(q.case_id, q.query_id): (q.passed, [(r.labels, round(r.score, 4)) for r in q.retrieved])
            for q in run.queries}


def test_golden_suite_ranks_the_same_on_edge_and_client(embedder):
    edge = _rankings("edge")
    client = _rankings("client")
    assert len(edge) >= 40 and set(edge) == set(client)
    assert sum(len(r) for _, r in edge.values()) > 40  # the rankings are not empty
    diff = {k: (edge[k], client[k]) for k in edge if edge[k] != client[k]}
    assert diff == {}
