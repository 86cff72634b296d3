"""Unit tests of the sweep machinery's pure parts: parameter specs, weights, metric names,
constraints, write/retrieval key split, per-query cutoff metrics and figure builders."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from memory_engine.config import EngineConfig
from memory_engine.errors import ConfigError
from memory_engine.evaluation.runner import QueryResult, Retrieved
from memory_engine.evaluation.sweep import (
    Direction,
    MetricRef,
    SearchMode,
    SpecKind,
    grid_points,
    is_write_key,
    normalise_weights,
    parse_constraint,
    parse_metric,
    parse_param,
    parse_params,
    query_value,
    weight_notes,
    write_signature,
)
from memory_engine.evaluation.sweep_report import (
    importance_figure,
    importances_frame,
    parallel_coordinates_figure,
    param_heatmap_figure,
    pareto_front_figure,
)
from memory_engine.evaluation.sweep_study import SweepSpec

pytestmark = pytest.mark.unit


def test_range_with_step_is_an_inclusive_grid_without_float_noise():
    s = parse_param("write.threshold=0.5:0.8:0.05")
    assert s.kind == SpecKind.RANGE and s.gridable and s.write
    assert s.grid_values() == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
    assert parse_param("retrieval.weights.recency=0:0.5:0.1").grid_values() == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)


def test_int_field_range_gives_ints_and_rejects_fractions():
    s = parse_param("retrieval.top_k=3:9:3")
    assert s.is_int and s.grid_values() == (3, 6, 9)
    assert all(type(v) is int for v in s.grid_values())
    with pytest.raises(ConfigError, match="retrieval.top_k"):
        parse_param("retrieval.top_k=1:5:0.5")


def test_choices_parse_enum_values_and_numbers():
    s = parse_param("retrieval.fusion=weighted,five_term,rrf")
    assert s.kind == SpecKind.CHOICES and s.choices == ("weighted", "five_term", "rrf") and not s.write
    assert parse_param("retrieval.tau_days=1,3,7,14,30").grid_values() == (1, 3, 7, 14, 30)
    assert parse_param("retrieval.half_life_days.fact=null,30").choices == (None, 30)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("retrieval.flor=0.1,0.2", "unknown config key 'retrieval.flor'"),
        ("retrieval.fusion=weighted,borda", "retrieval.fusion: value 'borda' is invalid"),
        ("retrieval.floor=0.2:1.5:0.1", "retrieval.floor: value 1.1"),
        ("retrieval.floor=0.8:0.2:0.1", "high < low"),
        ("retrieval.floor=0.1:0.2:0", "step must be > 0"),
        ("retrieval.floor", "expected KEY=LOW:HIGH"),
        ("retrieval.floor=0.1,,0.2", "empty item"),
        ("tracing.enabled=true,false", "nothing to sweep"),
    ],
)
def test_bad_specs_name_the_key_and_the_problem(text, fragment):
    with pytest.raises(ConfigError) as ei:
        parse_param(text)
    assert fragment in str(ei.value)


def test_continuous_range_has_no_grid_but_works_for_tpe():
    s = parse_param("retrieval.tau_days=1:30")
    assert not s.gridable
    with pytest.raises(ConfigError, match="give a step"):
        s.grid_values()
    with pytest.raises(ConfigError, match="give a step"):
        SweepSpec(("x.yaml",), (s,), SearchMode.GRID)
    assert SweepSpec(("x.yaml",), (s,), SearchMode.TPE).search == SearchMode.TPE


def test_duplicate_params_rejected():
    with pytest.raises(ConfigError, match="more than once: retrieval.floor"):
        parse_params(["retrieval.floor=0.1,0.2", "retrieval.floor=0.3"])


def test_write_keys_and_signature():
    assert is_write_key("write.threshold") and is_write_key("embedding.similarity_baseline")
    assert is_write_key("retrieval.route_limit")  # the correction search reads it while writing
    assert not is_write_key("retrieval.floor") and not is_write_key("retrieval.weights.recency")
    base = EngineConfig()
    assert write_signature(base) == write_signature(base.with_overrides({"retrieval.floor": 0.1, "retrieval.fusion": "rrf"}))
    assert write_signature(base) != write_signature(base.with_overrides({"write.threshold": 0.7}))
    assert write_signature(base) != write_signature(base.with_overrides({"retrieval.route_limit": 7}))


def test_grid_points_vary_write_params_slowest():
    specs = parse_params(["retrieval.floor=0.1,0.2,0.3", "write.threshold=0.5,0.6"])
    pts = grid_points(specs)
    assert len(pts) == 6
    assert [p["write.threshold"] for p in pts] == [0.5, 0.5, 0.5, 0.6, 0.6, 0.6]
    assert len({tuple(sorted(p.items())) for p in pts}) == 6


def test_weights_are_normalised_per_group():
    base = EngineConfig()  # similarity 0.5, recency 0.3, importance 0.2
    out = normalise_weights({"retrieval.weights.recency": 0.5, "retrieval.floor": 0.4}, base)
    assert out["retrieval.floor"] == 0.4
    assert math.isclose(out["retrieval.weights.similarity"], 0.5 / 1.2)
    assert math.isclose(out["retrieval.weights.recency"], 0.5 / 1.2)
    assert math.isclose(out["retrieval.weights.importance"], 0.2 / 1.2)
    assert math.isclose(sum(v for k, v in out.items() if k.startswith("retrieval.weights.")), 1.0)
    assert not any(k.startswith("retrieval.five_term_weights") for k in out)
    with pytest.raises(ConfigError, match="sum to 0"):
        normalise_weights({"retrieval.weights.similarity": 0, "retrieval.weights.recency": 0,
                           "retrieval.weights.importance": 0}, base)
    notes = weight_notes(parse_params(["retrieval.weights.recency=0:0.5:0.1"]))
    assert len(notes) == 1 and "retrieval.weights" in notes[0] and "sum to 1" in notes[0]


def test_metric_names_directions_and_categories():
    assert parse_metric("ndcg@5") == MetricRef("ndcg@5")
    assert parse_metric("ndcg") == MetricRef("ndcg@k")
    assert parse_metric("mrr@k") == MetricRef("mrr")
    assert parse_metric("recall@3:negation_constraint") == MetricRef("recall@3", "negation_constraint")
    assert parse_metric("ndcg@5").direction == Direction.MAXIMIZE
    assert parse_metric("latency_p95_ms").direction == Direction.MINIMIZE
    assert parse_metric("stored_memories").direction == Direction.MINIMIZE and not parse_metric("stored_memories").per_query
    for bad in ("ndgc@5", "ndcg@0", "recall@5:", "precision"):
        with pytest.raises(ConfigError, match="metric"):
            parse_metric(bad)


def test_constraints():
    c = parse_constraint("violations==0")
    assert c.metric == MetricRef("violations") and c.holds(0.0) and not c.holds(1.0) and not c.holds(None)
    c = parse_constraint("pass >= 0.9")
    assert c.holds(0.9) and c.holds(1.0) and not c.holds(0.89)
    assert parse_constraint("recall@5:temporal>0.5").metric.category == "temporal"
    with pytest.raises(ConfigError, match="constraint"):
        parse_constraint("violations=0")


def _q(retrieved_labels, relevant, k=5):
    ret = tuple(Retrieved(i, f"id{i}", (lab,), "", 1.0, ("vector",)) for i, lab in enumerate(retrieved_labels, 1))
    ranks = {lab: (retrieved_labels.index(lab) + 1 if lab in retrieved_labels else None) for lab in relevant}
    return QueryResult(
        suite="s", case_id="c", query_id="q", category="cat", lang="en", tags=(), must_pass=False, text="t", k=k,
        passed=True, assertions=(), relevant=dict(relevant), relevant_ranks=ranks, retrieved=ret,
        hit=None, recall=None, rr=None, ndcg=None, recall_at={}, latency_ms=3.0, irrelevant_violations=("x",),
        leaks=(), misses=(),
    )


def test_query_values_at_a_cutoff_are_hand_checked():
    # relevant a (rank 2), b (rank 4), c (never returned)
    q = _q(["n1", "a", "n2", "b", "n3"], {"a": 1.0, "b": 1.0, "c": 1.0})
    assert query_value(q, "hit@1") == 0.0
    assert query_value(q, "hit@2") == 1.0
    assert query_value(q, "recall@2") == pytest.approx(1 / 3)
    assert query_value(q, "recall@4") == pytest.approx(2 / 3)
    assert query_value(q, "mrr@1") == 0.0
    assert query_value(q, "mrr@3") == pytest.approx(0.5)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert query_value(q, "ndcg@4") == pytest.approx(dcg / idcg)
    assert query_value(q, "violations") == 1.0 and query_value(q, "latency_p95_ms") == 3.0


def _frame():
    return pd.DataFrame({
        "number": [0, 1, 2, 3, 4],
        "status": ["complete", "complete", "complete", "infeasible", "complete"],
        "param:retrieval.floor": [0.1, 0.1, 0.3, 0.3, 0.5],
        "param:retrieval.fusion": ["rrf", "weighted", "rrf", "weighted", "rrf"],
        "value_0": [0.5, 0.7, 0.6, math.nan, 0.9],
        "value_1": [10.0, 5.0, 7.0, math.nan, 20.0],
        "pareto": [False, True, True, False, True],
    })


def test_parallel_coordinates_builder_maps_categories_and_skips_incomplete_trials():
    fig = parallel_coordinates_figure(_frame())
    (tr,) = fig.data
    assert tr.type == "parcoords"
    dims = {d.label: d for d in tr.dimensions}
    assert list(dims) == ["retrieval.floor", "retrieval.fusion", "value_0"]
    assert list(dims["retrieval.fusion"].ticktext) == ["rrf", "weighted"]
    assert list(dims["retrieval.fusion"].values) == [0.0, 1.0, 0.0, 0.0]
    assert list(dims["value_0"].values) == [0.5, 0.7, 0.6, 0.9]


def test_heatmap_builder_pivots_means_over_two_params():
    fig = param_heatmap_figure(_frame(), "retrieval.floor", "retrieval.fusion")
    (tr,) = fig.data
    assert tr.type == "heatmap"
    assert list(tr.x) == ["0.1", "0.3", "0.5"] and list(tr.y) == ["rrf", "weighted"]
    assert tr.z[0][0] == 0.5 and tr.z[1][0] == 0.7 and tr.z[0][2] == 0.9
    assert math.isnan(tr.z[1][1])  # the infeasible trial is not plotted


def test_pareto_builder_highlights_the_front():
    fig = pareto_front_figure(_frame())
    assert [t.name for t in fig.data] == ["trials", "Pareto front"]
    assert list(fig.data[1].x) == [0.6, 0.7, 0.9]


def test_importance_builder_and_empty_inputs():
    fig = importance_figure(importances_frame({"a": 0.2, "b": 0.8}))
    assert list(fig.data[0].y) == ["a", "b"]
    empty = pd.DataFrame({"number": [], "status": []})
    assert len(parallel_coordinates_figure(empty).data) == 0
    assert len(pareto_front_figure(empty).data) == 0


def test_embedding_table_round_trip_serves_without_a_model(tmp_path):
    import numpy as np

    from memory_engine.evaluation.sweep_study import TableEmbedder

    v = np.arange(4, dtype=np.float32) / 10
    t = TableEmbedder("fake:model:4", 4, {("d", "hello"): v, ("q", "hi?"): v[::-1].copy()}, 0.5)
    t.save(tmp_path / "emb.npz")
    table, meta = TableEmbedder.load_table(tmp_path / "emb.npz")
    w = TableEmbedder(meta["version"], meta["dim"], table, 0.5)  # no model: a miss must fail loudly
    assert np.array_equal(w.embed_documents(["hello", "hello"])[1], v)
    assert np.array_equal(w.embed_query("hi?"), v[::-1])
    assert w.rescale(0.75) == 0.5 and w.misses == 0
    from memory_engine.evaluation.sweep import SweepError

    with pytest.raises(SweepError, match="missing from the embedding table"):
        w.embed_query("unseen")
